"""Held-out kernel for ``irscope repro``: helpers reached through a nested package
(``heldout_a_pkg.sub.act.leaky_clipped``), which reach theirs by relative imports, and
a helper imported from the subpackage under its own name, and a ``noinline`` one
(its symbol names its module, ``heldout_a_pkg.sub.base``); and two helpers of one name
(``leaky``) from two modules, each reading its own module's ``SLOPE``."""
import torch
import triton
import triton.language as tl

import heldout_a_pkg
import heldout_a_pkg.sub.act
from heldout_a_pkg.sub import act as acts
from heldout_a_pkg.sub.base import clip, scalar_gain
from heldout_a_pkg.sub import alt

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def nested_pkg_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = heldout_a_pkg.sub.act.leaky_clipped(x, 4.0) + acts.leaky(x)
    g = scalar_gain(tl.load(x_ptr), 2.0)
    tl.store(y_ptr + offs, clip(y, -2.0, 2.0) * g, mask=mask)


@triton.jit
def same_name_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, acts.leaky(x) + alt.leaky(x) * 3.0, mask=mask)


if __name__ == "__main__":
    x = torch.randn(4096, device=DEVICE)
    y = torch.empty_like(x)
    nested_pkg_kernel[(16,)](x, y, 4096, BLOCK=256)
    same_name_kernel[(16,)](x, y, 4096, BLOCK=256)
