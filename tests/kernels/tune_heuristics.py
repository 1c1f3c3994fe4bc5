"""A kernel whose ``@triton.heuristics`` depend on a constexpr a tune varies (``EVEN``
on ``BLOCK``, ``HALF`` on ``EVEN``, the ``num_warps`` option on ``BLOCK``), with a ``num_stages`` that is both a constexpr of
the kernel and a compile option, and tuple parameters (two pointers; a scale and an
offset of 1, which Triton makes a constant). The script has no ``__main__`` guard, like Triton's
tutorials: loading it launches its kernels. It compiles the base configuration
(BLOCK=128, num_stages=3), then two that ``irscope tune`` must agree with
(tests/test_tune_heuristics.py)."""

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.heuristics({
    "EVEN": lambda args: args["n_cols"] % args["BLOCK"] == 0,
    "HALF": lambda args: args["BLOCK"] // 2 if args["EVEN"] else args["BLOCK"],
    "num_warps": lambda args: 2 if args["BLOCK"] <= 64 else 4,  # not a parameter: a launch makes it an option
})
@triton.jit
def rows_kernel(ptrs, n_rows, n_cols, coeffs, BLOCK: tl.constexpr, EVEN: tl.constexpr, HALF: tl.constexpr,
                num_stages: tl.constexpr):
    x_ptr, y_ptr = ptrs[0], ptrs[1]
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=num_stages):
        for start in range(0, n_cols, BLOCK):
            offs = start + tl.arange(0, HALF)
            if EVEN:
                x = tl.load(x_ptr + row * n_cols + offs)
                tl.store(y_ptr + row * n_cols + offs, x * coeffs[0] + coeffs[1])
            else:
                x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
                tl.store(y_ptr + row * n_cols + offs, x * coeffs[0] + coeffs[1], mask=offs < n_cols)


x = torch.randn((64, 960), device=DEVICE)
y = torch.empty_like(x)
# 960 columns: a multiple of 64, not of 128 or 256
for block, stages in ((128, 3), (64, 2), (256, 2)):
    rows_kernel[(16,)]((x, y), 64, 960, (2.0, 1), BLOCK=block, num_stages=stages)
