"""Held-out kernels for ``irscope repro``: launches with ``num_ctas=2`` (sm_90),
``maxnreg``, and ``enable_fp_fusion=False``; and an ``@triton.autotune`` over two
configs stacked on ``@triton.heuristics``, with ``key`` and ``reset_to_zero``."""
import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def fma_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(z_ptr + offs, x * y + x, mask=mask)


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 128}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK": 256}, num_warps=8, num_stages=3),
    ],
    key=["n"],
    reset_to_zero=["out_ptr"],
)
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def tuned_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
    else:
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


if __name__ == "__main__":
    x = torch.randn(4096, device=DEVICE)
    y = torch.randn(4096, device=DEVICE)
    z = torch.empty_like(x)
    fma_kernel[(16,)](x, y, z, 4096, BLOCK=256, enable_fp_fusion=False)
    fma_kernel[(8,)](x, y, z, 4096, BLOCK=512, maxnreg=64, num_warps=2)
    if triton.runtime.driver.active.get_current_target().arch >= 90:  # clusters need Hopper
        fma_kernel[(8,)](x, y, z, 4096, BLOCK=512, num_ctas=2)
    out = torch.zeros(1, device=DEVICE)
    tuned_sum_kernel[lambda meta: (triton.cdiv(4000, meta["BLOCK"]),)](x, out, 4000)
