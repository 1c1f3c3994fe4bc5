"""A K loop whose bound is a constexpr (``tl.static_range(K_TILES)``: fully unrolled in
the TTIR, no scf.for for the pipeliner), followed by a runtime loop over row blocks
that it does pipeline. Compiled with num_stages=3 and 2."""

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def static_loop_kernel(x_ptr, w_ptr, y_ptr, n_rows, D: tl.constexpr, K_TILES: tl.constexpr,
                       BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr):
    rd = tl.arange(0, D)
    rk = tl.arange(0, BLOCK_K)
    for r0 in range(tl.program_id(0) * BLOCK_R, n_rows, tl.num_programs(0) * BLOCK_R):
        rr = r0 + tl.arange(0, BLOCK_R)
        acc = tl.zeros((BLOCK_R, D), dtype=tl.float32)
        for t in tl.static_range(K_TILES):
            x = tl.load(x_ptr + rr[:, None] * (K_TILES * BLOCK_K) + (t * BLOCK_K + rk)[None, :],
                        mask=rr[:, None] < n_rows, other=0.0)
            w = tl.load(w_ptr + (t * BLOCK_K + rk)[:, None] * D + rd[None, :])
            acc = tl.dot(x, w, acc)
        tl.store(y_ptr + rr[:, None] * D + rd[None, :], acc.to(tl.float16), mask=rr[:, None] < n_rows)


R, D, KT, BK = 1000, 64, 4, 32
x = torch.randn((R, KT * BK), device=DEVICE, dtype=torch.float16)
w = torch.randn((KT * BK, D), device=DEVICE, dtype=torch.float16)
y = torch.empty((R, D), device=DEVICE, dtype=torch.float16)
for stages in (3, 2):
    static_loop_kernel[(8,)](x, w, y, R, D=D, K_TILES=KT, BLOCK_R=64, BLOCK_K=BK, num_warps=4, num_stages=stages)
