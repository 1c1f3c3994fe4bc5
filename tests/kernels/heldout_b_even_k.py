"""A matmul whose ``EVEN_K`` constexpr a ``@triton.heuristics`` computes from the
launch (K a multiple of BLOCK_K: no masks in the loop), and ``num_warps`` too.
K=320: EVEN_K is true for BLOCK_K=32 and 64, false for 128. Compiled with
BLOCK_K=32 at num_stages=3 and 2, and BLOCK_K=128 at 3."""

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.heuristics({
    "EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0,
    "num_warps": lambda args: 8 if args["BLOCK_K"] >= 128 else 4,
})
@triton.jit
def even_k_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        kk = k * BLOCK_K + rk
        if EVEN_K:
            a = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :])
            b = tl.load(b_ptr + kk[:, None] * stride_bk + rn[None, :])
        else:
            a = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :], mask=kk[None, :] < K, other=0.0)
            b = tl.load(b_ptr + kk[:, None] * stride_bk + rn[None, :], mask=kk[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


M, N, K = 128, 128, 320
a = torch.randn((M, K), device=DEVICE, dtype=torch.float16)
b = torch.randn((K, N), device=DEVICE, dtype=torch.float16)
c = torch.empty((M, N), device=DEVICE, dtype=torch.float32)
for bk, stages in ((32, 3), (32, 2), (128, 3)):
    even_k_kernel[(M // 64, N // 64)](a, b, c, M, N, K, a.stride(0), b.stride(0), BLOCK_M=64, BLOCK_N=64,
                                      BLOCK_K=bk, num_stages=stages)
