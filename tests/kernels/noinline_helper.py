"""A kernel that calls a ``@triton.jit(noinline=True)`` helper and prints: its SASS
holds a call into the helper (``CALL.REL.NOINC`` to the helper's symbol, placed after
the kernel's code in the same section), the helper's return to the kernel's symbol
(``RET.REL.NODEC R4 `(noinline_kernel)``) and ``vprintf`` calls, the branch forms an
imported Nsight Compute export must match."""
import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit(noinline=True)
def _scale(x, s):
    return x * s + 1.0


@triton.jit
def noinline_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    s = _scale(tl.load(x_ptr), 2.0)
    y = x * s
    if pid == 0:
        tl.device_print("y", y)
    tl.store(out_ptr + offs, y, mask=mask)


if __name__ == "__main__":
    x = torch.randn(4096, device=DEVICE)
    out = torch.empty_like(x)
    noinline_kernel[(4,)](x, out, 4096, BLOCK=1024)
