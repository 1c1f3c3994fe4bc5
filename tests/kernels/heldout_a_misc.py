"""Held-out kernel for ``irscope repro``: a kernel of a library module launched from
this script (its ``noinline`` helper's symbol names ``heldout_a_lib``), with a runtime
parameter left at its default, ``do_not_specialize_on_alignment``, a tuple
``tl.constexpr`` global, and ``tl.static_range`` with a constexpr step."""
import torch
import triton

from heldout_a_lib import lib_kernel

DEVICE = triton.runtime.driver.active.get_active_torch_device()

if __name__ == "__main__":
    x = torch.randn(64 * 32, device=DEVICE)
    y = torch.empty_like(x)
    lib_kernel[(1,)](x, y, 64 * 32)
    lib_kernel[(1,)](x[1:], y, 64 * 32 - 1, 3.0, STEP=3)
