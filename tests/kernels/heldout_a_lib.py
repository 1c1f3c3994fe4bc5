"""Kernels of a library module (not the script that launches them: their module is
``heldout_a_lib``), for heldout_a_misc.py."""
import triton
import triton.language as tl

TILE = tl.constexpr((64, 32))
HALF: tl.constexpr = 0.5  # an annotated global: Triton reads it only as a default below


@triton.jit(noinline=True)
def lib_gain(x, g):
    return x * g - 1.0


@triton.jit(do_not_specialize_on_alignment=["x_ptr"])
def lib_kernel(x_ptr, y_ptr, n, scale=2.0, STEP: tl.constexpr = 2):
    rows = tl.arange(0, TILE[0])
    cols = tl.arange(0, TILE[1])
    offs = rows[:, None] * TILE[1] + cols[None, :]
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    acc = tl.zeros_like(x)
    for i in tl.static_range(0, 6, STEP):
        acc += x * i
    g = lib_gain(tl.load(x_ptr), scale)
    tl.store(y_ptr + offs, acc * g, mask=offs < n)
