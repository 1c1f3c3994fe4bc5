"""An int8 x int8 -> int32 dot, and, on sm_90 (fp8 e4m3 needs it), an fp8 dot with a
float32 accumulator and a scale. Each compiled with num_stages=3 and 2."""

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()
ARCH = triton.runtime.driver.active.get_current_target().arch


@triton.jit
def int8_dot_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b, out_dtype=tl.int32)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def fp8_dot_kernel(a_ptr, b_ptr, c_ptr, scale, M, N, K,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], (acc * scale).to(tl.bfloat16))


M = N = K = 256
a = torch.randint(-8, 8, (M, K), device=DEVICE, dtype=torch.int8)
b = torch.randint(-8, 8, (K, N), device=DEVICE, dtype=torch.int8)
c = torch.empty((M, N), device=DEVICE, dtype=torch.int32)
for stages in (3, 2):
    int8_dot_kernel[(M // 64, N // 64)](a, b, c, M, N, K, BLOCK_M=64, BLOCK_N=64, BLOCK_K=64, num_warps=4,
                                        num_stages=stages)
if ARCH >= 89:
    a8 = torch.randn((M, K), device=DEVICE).to(torch.float8_e4m3fn)
    b8 = torch.randn((K, N), device=DEVICE).to(torch.float8_e4m3fn)
    c16 = torch.empty((M, N), device=DEVICE, dtype=torch.bfloat16)
    for stages in (3, 2):
        fp8_dot_kernel[(M // 64, N // 64)](a8, b8, c16, 0.5, M, N, K, BLOCK_M=64, BLOCK_N=64, BLOCK_K=64,
                                           num_warps=4, num_stages=stages)
