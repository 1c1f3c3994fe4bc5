"""Split-K matmul: ``tl.program_id(1)`` picks a slice of K, partial sums go out with
``tl.atomic_add`` into a float32 C. Compiled with num_stages=3 and 2."""

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def splitk_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    grid_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = pid // grid_n, pid % grid_n
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        remaining = K - k * BLOCK_K * SPLIT_K
        a = tl.load(a_ptrs, mask=rk[None, :] < remaining, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < remaining, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * SPLIT_K
        b_ptrs += BLOCK_K * SPLIT_K * stride_bk
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.atomic_add(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc, mask=mask)


M, N, K = 128, 128, 1024
a = torch.randn((M, K), device=DEVICE, dtype=torch.float16)
b = torch.randn((K, N), device=DEVICE, dtype=torch.float16)
c = torch.zeros((M, N), device=DEVICE, dtype=torch.float32)
for stages in (3, 2):
    splitk_kernel[(triton.cdiv(M, 64) * triton.cdiv(N, 64), 4)](
        a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, SPLIT_K=4,
        num_warps=4, num_stages=stages)
