"""Autotuned kernels whose two configs compile to the same SASS instructions.

``twin_kernel``: the configs differ only in a constexpr the code never reads (``TAG``):
the same SASS, line markers included, so a profiled launch's samples land on the same
lines whichever config it ran. ``mirror_kernel``: each config takes its own branch, the
same computation written on two lines: the same instructions, charged to different
lines, so which config ran must be named."""
import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()
CONFIGS = [triton.Config({"BLOCK": 256, "TAG": 0}, num_warps=4), triton.Config({"BLOCK": 256, "TAG": 1}, num_warps=4)]


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def twin_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, TAG: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * 2.0 + 1.0, mask=mask)


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def mirror_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, TAG: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if TAG == 0:
        y = x * 2.0 + 1.0
    else:
        y = x * 2.0 + 1.0
    tl.store(out_ptr + offs, y, mask=mask)


if __name__ == "__main__":
    x = torch.randn(4096, device=DEVICE)
    out = torch.empty_like(x)
    grid = lambda meta: (triton.cdiv(4096, meta["BLOCK"]),)  # noqa: E731
    twin_kernel[grid](x, out, 4096)
    mirror_kernel[grid](x, out, 4096)
