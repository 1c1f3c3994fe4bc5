"""Held-out kernels for ``irscope repro``: parameters annotated ``tl.tensor`` and with
strings (``"tl.constexpr"``), defaults of constexprs read from another module's
globals (``from heldout_a_consts import BLOCK``), and a dtype global used in the
body."""
import torch
import triton
import triton.language as tl

from heldout_a_consts import ACC_DTYPE, BLOCK, SCALE, USE_EXP2
import heldout_a_consts as consts

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def annotated_kernel(x_ptr: tl.tensor, y_ptr, n: tl.int32, BLOCK_N: "tl.constexpr" = BLOCK,
                     EXP2: tl.constexpr = USE_EXP2):
    offs = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(ACC_DTYPE)
    if EXP2:
        y = tl.exp2(x * SCALE)
    else:
        y = tl.exp(x * consts.SCALE)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


if __name__ == "__main__":
    x = torch.randn(4096, device=DEVICE, dtype=torch.float16)
    y = torch.empty_like(x)
    annotated_kernel[(16,)](x, y, 4096)
    annotated_kernel[(16,)](x, y, 4096, EXP2=False)
