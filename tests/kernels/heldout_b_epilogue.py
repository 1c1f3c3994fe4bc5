"""A matmul with a fused epilogue: the activation is a ``@triton.jit`` helper chosen by
a string constexpr (``ACTIVATION="leaky"``/``"gelu"``), and the helpers call a shared
one. Compiled with ACTIVATION="gelu" at num_stages=3 and 2, and "leaky" at 3."""

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()
SLOPE = tl.constexpr(0.01)


@triton.jit
def _cube(x):
    return x * x * x


@triton.jit
def gelu_tanh(x):
    inner = 0.7978845608028654 * (x + 0.044715 * _cube(x))
    e = tl.exp(2.0 * inner)
    return 0.5 * x * (1.0 + (e - 1.0) / (e + 1.0))


@triton.jit
def leaky(x):
    return tl.where(x >= 0, x, SLOPE * x)


@triton.jit
def epilogue_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, ACTIVATION: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    if ACTIVATION == "gelu":
        acc = gelu_tanh(acc)
    elif ACTIVATION == "leaky":
        acc = leaky(acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


M = N = K = 256
a = torch.randn((M, K), device=DEVICE, dtype=torch.float16)
b = torch.randn((K, N), device=DEVICE, dtype=torch.float16)
c = torch.empty((M, N), device=DEVICE, dtype=torch.float16)
for act, stages in (("gelu", 3), ("gelu", 2), ("leaky", 3)):
    epilogue_kernel[(M // 64, N // 64)](a, b, c, M, N, K, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, ACTIVATION=act,
                                        num_warps=4, num_stages=stages)
