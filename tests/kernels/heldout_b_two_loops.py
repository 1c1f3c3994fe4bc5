"""Two K loops one after the other (``C = A @ B + D @ E``, with different K), both
pipelined; a pointer-increment style in the first, index arithmetic in the second.
Compiled with num_stages=4 and 2."""

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def two_loops_kernel(a_ptr, b_ptr, d_ptr, e_ptr, c_ptr, M, N, K1, K2,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    a_ptrs = a_ptr + rm[:, None] * K1 + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    for _ in range(0, K1, BLOCK_K):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    for k in range(0, K2, BLOCK_K):
        d = tl.load(d_ptr + rm[:, None] * K2 + (k + rk)[None, :])
        e = tl.load(e_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(d, e, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


M = N = 128
K1, K2 = 256, 128
a = torch.randn((M, K1), device=DEVICE, dtype=torch.float16)
b = torch.randn((K1, N), device=DEVICE, dtype=torch.float16)
d = torch.randn((M, K2), device=DEVICE, dtype=torch.float16)
e = torch.randn((K2, N), device=DEVICE, dtype=torch.float16)
c = torch.empty((M, N), device=DEVICE, dtype=torch.float16)
for stages in (4, 2):
    two_loops_kernel[(M // 64, N // 64)](a, b, d, e, c, M, N, K1, K2, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32,
                                         num_warps=4, num_stages=stages)
