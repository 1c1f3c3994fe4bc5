import triton
import triton.language as tl


@triton.jit
def clip(x, lo, hi):
    return tl.minimum(tl.maximum(x, lo), hi)


@triton.jit(noinline=True)
def scalar_gain(x, g):
    return x * g + 1.0  # a function of its own: its symbol names this module
