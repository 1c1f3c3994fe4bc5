"""Held-out kernels for ``irscope repro``: ``tl.inline_asm_elementwise`` (packed and
not), and libdevice reached three ways (``triton.language.extra.libdevice`` imported
by name, the ``tl.extra.cuda.libdevice`` attribute chain, and a module alias)."""
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice
import triton.language.extra.cuda.libdevice as cudadev

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def asm_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    z = tl.inline_asm_elementwise(
        asm="""
        {
            .reg .b8 a<4>;
            mov.b32 {a0, a1, a2, a3}, $4;
            cvt.u32.u8 $0, a0;
            cvt.u32.u8 $1, a1;
            cvt.u32.u8 $2, a2;
            cvt.u32.u8 $3, a3;
        }
        """,
        constraints="=r,=r,=r,=r,r",
        args=[x.to(tl.uint8, bitcast=False)],
        dtype=tl.int32, is_pure=True, pack=4)
    tl.store(y_ptr + offs, y + z, mask=mask)


@triton.jit
def libdevice_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    a = libdevice.tanh(x) + tl.extra.cuda.libdevice.erf(x)
    b = cudadev.rsqrt(tl.abs(x) + 1.0) * libdevice.pow(x, 2.0)
    tl.store(y_ptr + offs, a + b + libdevice.fast_expf(x), mask=mask)


if __name__ == "__main__":
    xi = torch.randint(0, 100, (4096,), dtype=torch.int32, device=DEVICE)
    yi = torch.empty_like(xi)
    asm_kernel[(16,)](xi, yi, 4096, BLOCK=256)
    x = torch.randn(4096, device=DEVICE)
    y = torch.empty_like(x)
    libdevice_kernel[(16,)](x, y, 4096, BLOCK=256)
