import triton
import triton.language as tl

from ..consts import SLOPE
from .base import clip
from . import base


@triton.jit
def leaky(x):
    return tl.where(x > 0, x, x * SLOPE)


@triton.jit
def leaky_clipped(x, HI: tl.constexpr):
    return clip(leaky(x), -HI, HI) + base.clip(x, 0.0, 1.0)
