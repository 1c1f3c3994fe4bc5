"""A matmul on block pointers (``tl.make_block_ptr``, ``tl.advance``, boundary checks
on the M edge only). Compiled with num_stages=3 and 2."""

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def block_ptr_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    off_m, off_n = tl.program_id(0) * BLOCK_M, tl.program_id(1) * BLOCK_N
    a_blk = tl.make_block_ptr(a_ptr, (M, K), (stride_am, stride_ak), (off_m, 0), (BLOCK_M, BLOCK_K), (1, 0))
    b_blk = tl.make_block_ptr(b_ptr, (K, N), (stride_bk, stride_bn), (0, off_n), (BLOCK_K, BLOCK_N), (1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        a = tl.load(a_blk, boundary_check=(0,), padding_option="zero")
        b = tl.load(b_blk)
        acc = tl.dot(a, b, acc)
        a_blk = tl.advance(a_blk, (0, BLOCK_K))
        b_blk = tl.advance(b_blk, (BLOCK_K, 0))
    c_blk = tl.make_block_ptr(c_ptr, (M, N), (stride_cm, 1), (off_m, off_n), (BLOCK_M, BLOCK_N), (1, 0))
    tl.store(c_blk, acc.to(tl.float16), boundary_check=(0,))


M, N, K = 200, 128, 256
a = torch.randn((M, K), device=DEVICE, dtype=torch.float16)
b = torch.randn((K, N), device=DEVICE, dtype=torch.float16)
c = torch.empty((M, N), device=DEVICE, dtype=torch.float16)
for stages in (3, 2):
    block_ptr_kernel[(triton.cdiv(M, 64), N // 64)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                                                   b.stride(1), c.stride(0), BLOCK_M=64, BLOCK_N=64, BLOCK_K=32,
                                                   num_warps=4, num_stages=stages)
