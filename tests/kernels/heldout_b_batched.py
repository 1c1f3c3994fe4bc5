"""Batched matmul over a 3-D grid: ``tl.program_id(2)`` is the batch, with batch
strides (the batch stride of B is 0: one B for every batch). Compiled with
num_stages=3 and 2."""

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def batched_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_ab, stride_am, stride_bb, stride_bk, stride_cb, stride_cm,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m, pid_n, batch = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    a_ptr += batch.to(tl.int64) * stride_ab
    b_ptr += batch.to(tl.int64) * stride_bb
    c_ptr += batch.to(tl.int64) * stride_cb
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :], mask=rm[:, None] < M, other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :], mask=rn[None, :] < N, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.bfloat16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


B, M, N, K = 6, 96, 128, 128
a = torch.randn((B, M, K), device=DEVICE, dtype=torch.bfloat16)
b = torch.randn((K, N), device=DEVICE, dtype=torch.bfloat16)
c = torch.empty((B, M, N), device=DEVICE, dtype=torch.bfloat16)
for stages in (3, 2):
    batched_kernel[(triton.cdiv(M, 64), triton.cdiv(N, 64), B)](
        a, b, c, M, N, K, a.stride(0), a.stride(1), 0, b.stride(0), c.stride(0), c.stride(1),
        BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4, num_stages=stages)
