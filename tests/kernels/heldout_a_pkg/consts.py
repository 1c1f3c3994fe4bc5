import triton.language as tl

SLOPE = tl.constexpr(0.125)
