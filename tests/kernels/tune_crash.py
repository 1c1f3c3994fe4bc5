"""A kernel whose compile kills the compiling process for one value of BLOCK, as an
LLVM assertion does (SIGABRT): ``irscope tune`` must keep that configuration as a
failed row and compile the configurations after it in a new process; and whose
``EVEN`` is set by ``@triton.heuristics`` from a launch argument
(tests/test_tune_crash.py)."""

import os

import torch
import triton
import triton.language as tl

CRASHING_BLOCK = 96


@triton.constexpr_function
def checked_block(block):
    if block == CRASHING_BLOCK:
        getattr(os, "abort")()  # looked up at call time: Triton refuses a kernel that names a builtin
    return block


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, checked_block(BLOCK))
    if EVEN:
        x = tl.load(x_ptr + offs)
        tl.store(x_ptr + offs, x * 2)
    else:
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(x_ptr + offs, x * 2, mask=offs < n)


if __name__ == "__main__":
    x = torch.ones(1000, device="cuda")
    scale_kernel[(8,)](x, 1000, BLOCK=128)
