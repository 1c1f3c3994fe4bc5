"""Held-out kernels for ``irscope repro``: ``tl.associative_scan`` and ``tl.reduce``
with user ``@triton.jit`` combine functions (one of two values, one a tuple of two
tensors), and the static checks and unrolled loops of ``tl.static_assert``,
``tl.device_assert`` and ``tl.static_range``."""
import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def _add_mul(a, b):
    return a * 0.5 + b


@triton.jit
def _argmax_combine(v1, i1, v2, i2):
    take = (v1 > v2) | ((v1 == v2) & (i1 < i2))
    return tl.where(take, v1, v2), tl.where(take, i1, i2)


@triton.jit
def scan_reduce_kernel(x_ptr, scan_ptr, val_ptr, idx_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + row * N + offs)
    s = tl.associative_scan(x, 0, _add_mul)
    tl.store(scan_ptr + row * N + offs, s)
    v, i = tl.reduce((x, offs), 0, _argmax_combine)
    tl.store(val_ptr + row, v)
    tl.store(idx_ptr + row, i)


@triton.jit
def static_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, UNROLL: tl.constexpr):
    tl.static_assert(BLOCK % 32 == 0, "BLOCK must be a multiple of 32")
    tl.static_assert(UNROLL <= 8)
    base = tl.program_id(0) * BLOCK * UNROLL
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for u in tl.static_range(UNROLL):
        offs = base + u * BLOCK + tl.arange(0, BLOCK)
        tl.device_assert(offs >= 0, "negative offset")
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0) * (u + 1)
    tl.store(y_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), acc)


if __name__ == "__main__":
    x = torch.randn(64, 128, device=DEVICE)
    s = torch.empty_like(x)
    v = torch.empty(64, device=DEVICE)
    i = torch.empty(64, dtype=torch.int32, device=DEVICE)
    scan_reduce_kernel[(64,)](x, s, v, i, N=128)
    xs = torch.randn(8192, device=DEVICE)
    ys = torch.empty(8192, device=DEVICE)
    static_kernel[(8,)](xs, ys, 8192, BLOCK=256, UNROLL=4)
