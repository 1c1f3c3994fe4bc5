"""A kernel on host tensor descriptors whose block shapes (part of the kernel's
signature) the autotuner's config ``pre_hook`` sets from the config, as Triton's
TMA tutorials do. The autotuner's first config (BLOCK_M=8) does not compile; the
script compiles the base config (BLOCK_M=64), then the BLOCK_M=32 config that
``irscope tune --grid BLOCK_M=32`` must agree with (tests/test_tune_heuristics.py)."""

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

DEVICE = triton.runtime.driver.active.get_active_torch_device()


def set_block(nargs):
    nargs["x_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_N"]]
    nargs["y_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_N"]]


def config(block_m):
    return triton.Config({"BLOCK_M": block_m, "BLOCK_N": 64}, num_warps=4, pre_hook=set_block)


@triton.autotune(configs=[config(8), config(64)], key=["M"])
@triton.jit
def copy_kernel(x_desc, y_desc, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    tl.static_assert(BLOCK_M >= 16)
    x = x_desc.load([tl.program_id(0) * BLOCK_M, tl.program_id(1) * BLOCK_N])
    y_desc.store([tl.program_id(0) * BLOCK_M, tl.program_id(1) * BLOCK_N], x * 2)


x = torch.randn((512, 256), device=DEVICE, dtype=torch.float16)
y = torch.empty_like(x)
descs = [TensorDescriptor(t, t.shape, t.stride(), [1, 1]) for t in (x, y)]
grid = lambda META: (triton.cdiv(512, META["BLOCK_M"]), triton.cdiv(256, META["BLOCK_N"]))
copy_kernel[grid](*descs, 512, 256)
copy_kernel.configs = [config(32)]
copy_kernel.cache.clear()
copy_kernel[grid](*descs, 512, 256)
