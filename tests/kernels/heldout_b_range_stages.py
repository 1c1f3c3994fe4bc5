"""A matmul whose K loop sets its own stages and unrolling on ``tl.range``
(``num_stages=LOOP_STAGES``, ``loop_unroll_factor=2``) while the launch's
``num_stages`` is the option; a second loop, over rows of a bias, takes the
option's stages. Compiled with num_stages=3 and num_stages=2."""

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def range_stages_kernel(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K, n_bias,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        LOOP_STAGES: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, num_stages=LOOP_STAGES, loop_unroll_factor=2):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    bias = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for r in range(0, n_bias):  # the option's num_stages
        bias += tl.load(bias_ptr + r * N + rn).to(tl.float32)
    acc += bias[None, :]
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


M = N = K = 256
a = torch.randn((M, K), device=DEVICE, dtype=torch.float16)
b = torch.randn((K, N), device=DEVICE, dtype=torch.float16)
bias = torch.randn((4, N), device=DEVICE, dtype=torch.float16)
c = torch.empty((M, N), device=DEVICE, dtype=torch.float16)
for stages in (3, 2):
    range_stages_kernel[(M // 64, N // 64)](a, b, c, bias, M, N, K, 4, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32,
                                            LOOP_STAGES=3, num_warps=4, num_stages=stages)
