"""An autotuned matmul whose configs differ in ``num_warps`` and (on sm_90) ``num_ctas``,
with the stages left to the config (num_stages 3 and 2)."""

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()
ARCH = triton.runtime.driver.active.get_current_target().arch


def configs():
    ctas = 2 if ARCH >= 90 else 1
    return [triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=4, num_stages=3),
            triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=2),
            triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=4, num_stages=3, num_ctas=ctas)]


@triton.autotune(configs=configs(), key=["M", "N", "K"])
@triton.jit
def autotune_ctas_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


M = N = K = 256
a = torch.randn((M, K), device=DEVICE, dtype=torch.float16)
b = torch.randn((K, N), device=DEVICE, dtype=torch.float16)
c = torch.empty((M, N), device=DEVICE, dtype=torch.float16)
autotune_ctas_kernel[lambda META: (M // META["BLOCK_M"], N // META["BLOCK_N"])](a, b, c, M, N, K, BLOCK_K=32)
