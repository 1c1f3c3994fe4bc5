"""Held-out kernels for ``irscope repro``: one defined inside a factory function,
closing over the factory's local constexpr and a local helper; one a class's
staticmethod (it calls a module-level helper: Triton reads no class attribute)."""
import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


def make_kernel(factor):
    FACTOR = tl.constexpr(factor)

    @triton.jit
    def _bump(x):
        return x * FACTOR + 1.0

    @triton.jit
    def closure_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(y_ptr + offs, _bump(x), mask=mask)

    return closure_kernel


@triton.jit
def _square(x):
    return x * x


class Ops:
    @staticmethod
    @triton.jit
    def method_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(y_ptr + offs, _square(x) + 2.0, mask=mask)


if __name__ == "__main__":
    x = torch.randn(4096, device=DEVICE)
    y = torch.empty_like(x)
    make_kernel(3.0)[(16,)](x, y, 4096, BLOCK=256)
    Ops.method_kernel[(8,)](x, y, 4096, BLOCK=512)
