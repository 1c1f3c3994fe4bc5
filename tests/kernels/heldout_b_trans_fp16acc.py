"""``C = A @ B.T`` with B stored N x K (loaded as is and transposed with ``tl.trans``)
and the accumulator in fp16 (``out_dtype=tl.float16``). Compiled with num_stages=4 and 2."""

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def trans_fp16acc_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    n_tiles = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = pid // n_tiles, pid % n_tiles
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        kk = k * BLOCK_K + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :], mask=kk[None, :] < K, other=0.0)
        b = tl.load(b_ptr + rn[:, None] * stride_bn + kk[None, :], mask=kk[None, :] < K, other=0.0)
        acc = tl.dot(a, tl.trans(b), acc, out_dtype=tl.float16)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


M, N, K = 256, 128, 200
a = torch.randn((M, K), device=DEVICE, dtype=torch.float16)
b = torch.randn((N, K), device=DEVICE, dtype=torch.float16)
c = torch.empty((M, N), device=DEVICE, dtype=torch.float16)
for stages in (4, 2):
    trans_fp16acc_kernel[(triton.cdiv(M, 64) * triton.cdiv(N, 64),)](
        a, b, c, M, N, K, a.stride(0), b.stride(0), BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4,
        num_stages=stages)
