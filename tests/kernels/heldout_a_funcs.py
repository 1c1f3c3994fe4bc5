"""Held-out kernels for ``irscope repro``: a ``@triton.jit`` function passed as a
constexpr argument (``ACT=relu``), Triton's functions imported by name
(``from triton.language import program_id``) and ``triton.language`` under another
alias, and ``@triton.jit(debug=True)`` keeping a ``tl.device_assert``."""
import torch
import triton
import triton.language as tl
import triton.language as language
from triton.language import arange as ar
from triton.language import program_id

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def relu(x):
    return tl.maximum(x, 0.0)


@triton.jit
def softplus(x):
    return tl.log(1.0 + tl.exp(x))


@triton.jit(debug=True)
def fnarg_kernel(x_ptr, y_ptr, n, ACT: tl.constexpr, BLOCK: tl.constexpr):
    offs = program_id(0) * BLOCK + ar(0, BLOCK)
    tl.device_assert(offs < n + BLOCK, "offset out of range")
    x = language.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, ACT(x), mask=offs < n)


if __name__ == "__main__":
    x = torch.randn(4096, device=DEVICE)
    y = torch.empty_like(x)
    fnarg_kernel[(16,)](x, y, 4096, ACT=relu, BLOCK=256)
    fnarg_kernel[(16,)](x, y, 4096, ACT=softplus, BLOCK=256)
