"""Held-out kernels for ``irscope repro``: ``tl.range`` with ``num_stages``,
``loop_unroll_factor``, ``flatten`` and ``disallow_acc_multi_buffer``; and ``tl.dot``
on int8 (int32 accumulator) and on fp8 (e4m3 inputs, fp32 accumulator,
``max_num_imprecise_acc``)."""
import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def range_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=2):
        for c in tl.range(0, n_cols, BLOCK, loop_unroll_factor=2):
            offs = c + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + r * n_cols + offs, mask=offs < n_cols, other=0.0)
    for i in tl.range(0, 4, flatten=True):
        for j in tl.range(0, 2):
            acc = acc * 0.5 + (i + j)
    tl.store(y_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), acc)


@triton.jit
def dot8_kernel(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                ACC: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k in tl.range(0, K, BK, num_stages=3, disallow_acc_multi_buffer=True):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc, out_dtype=ACC)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@triton.jit
def dot_fp8_kernel(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc, max_num_imprecise_acc=32)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))


if __name__ == "__main__":
    x = torch.randn(64, 1000, device=DEVICE)
    y = torch.empty(8 * 128, device=DEVICE)
    range_kernel[(8,)](x, y, 64, 1000, BLOCK=128)
    a = torch.randint(-8, 8, (64, 256), dtype=torch.int8, device=DEVICE)
    b = torch.randint(-8, 8, (256, 64), dtype=torch.int8, device=DEVICE)
    c = torch.empty(64, 64, dtype=torch.int32, device=DEVICE)
    dot8_kernel[(1,)](a, b, c, 256, BM=64, BN=64, BK=64, ACC=tl.int32)
    if triton.runtime.driver.active.get_current_target().arch >= 89:  # fp8 e4m3 dots need Ada or Hopper
        af = torch.randn(64, 256, device=DEVICE).to(torch.float8_e4m3fn)
        bf = torch.randn(256, 64, device=DEVICE).to(torch.float8_e4m3fn)
        cf = torch.empty(64, 64, dtype=torch.float16, device=DEVICE)
        dot_fp8_kernel[(1,)](af, bf, cf, 256, BM=64, BN=64, BK=64)
