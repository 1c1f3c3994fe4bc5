"""Held-out kernels for ``irscope repro``: load/store ``cache_modifier`` and
``eviction_policy``, ``tl.multiple_of`` / ``tl.max_contiguous`` hints, and
``@triton.jit(noinline=True)`` helpers, one calling another, with constexpr arguments
given as strings and None."""
import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def hinted_copy_kernel(x_ptr, y_ptr, n, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    start = tl.multiple_of(pid * BLOCK, BLOCK)
    offs = tl.max_contiguous(tl.multiple_of(start + tl.arange(0, BLOCK), BLOCK), BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs * stride, mask=mask, cache_modifier=".cg")
    w = tl.load(x_ptr + offs, mask=mask, eviction_policy="evict_last") + tl.load(x_ptr + offs, cache_modifier=".ca")
    tl.store(y_ptr + offs, x, mask=mask, cache_modifier=".wt")
    tl.store(y_ptr + n + offs, w, mask=mask, eviction_policy="evict_first")


@triton.jit(noinline=True)
def _inner(x, MODE: tl.constexpr):
    if MODE == "square":
        return x * x
    else:
        return x + 1.0


@triton.jit(noinline=True)
def _outer(x, y, MODE: tl.constexpr):
    return _inner(x, MODE) - y


@triton.jit
def mode_kernel(x_ptr, y_ptr, bias_ptr, n, MODE: tl.constexpr, ACT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if bias_ptr is not None:
        x += tl.load(bias_ptr + offs, mask=mask)
    y = x * _outer(tl.load(x_ptr + tl.program_id(0)), 0.5, MODE)  # noinline: scalar arguments only
    if ACT is not None:
        if ACT == "relu":
            y = tl.maximum(y, 0.0)
    tl.store(y_ptr + offs, y, mask=mask)


if __name__ == "__main__":
    x = torch.randn(4096, device=DEVICE)
    y = torch.empty_like(x)
    hinted_copy_kernel[(16,)](x, y, 4096, 1, BLOCK=256)
    mode_kernel[(16,)](x, y, None, 4096, MODE="square", ACT=None, BLOCK=256)
    mode_kernel[(16,)](x, y, x, 4096, MODE="inc", ACT="relu", BLOCK=256)
