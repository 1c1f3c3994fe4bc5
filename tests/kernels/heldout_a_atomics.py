"""Held-out kernels for ``irscope repro``: atomics (``tl.atomic_add`` with a mask and
a ``sem``/``scope``, ``atomic_max``), and a spin lock on ``tl.atomic_cas`` /
``tl.atomic_xchg`` guarding a read-modify-write."""
import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, max_ptr, n, BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + (x % BINS), 1, mask=mask, sem="relaxed", scope="gpu")
    tl.atomic_max(max_ptr, tl.max(x, axis=0))


@triton.jit
def locked_sum_kernel(x_ptr, total_ptr, lock_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    part = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.store(total_ptr, tl.load(total_ptr, volatile=True) + part)
    tl.atomic_xchg(lock_ptr, 0)


if __name__ == "__main__":
    x = torch.randint(0, 1000, (8192,), dtype=torch.int32, device=DEVICE)
    hist = torch.zeros(64, dtype=torch.int32, device=DEVICE)
    mx = torch.zeros(1, dtype=torch.int32, device=DEVICE)
    histogram_kernel[(8,)](x, hist, mx, 8192, BINS=64, BLOCK=1024)
    xf = torch.randn(8192, device=DEVICE)
    total = torch.zeros(1, device=DEVICE)
    lock = torch.zeros(1, dtype=torch.int32, device=DEVICE)
    locked_sum_kernel[(8,)](xf, total, lock, 8192, BLOCK=1024)
