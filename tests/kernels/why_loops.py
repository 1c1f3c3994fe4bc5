"""Loops Triton's software pipeliner does and does not pipeline, and a loop-free copy.

- ``gemm_kernel`` at num_stages=3 (64x64x32 fp16 tiles): the K loop is pipelined,
  its two loads become async copies (cp.async on sm_80, sm_90) in a 3-deep buffer;
  a compute-bound tile.
- ``gemm_kernel`` at num_stages=1: the same loop, left alone by the pipeliner.
- ``gemm_strided_kernel``: the GEMM reading every other row and column of A (neither
  stride is 1), so each element of A is its own 16-bit load: too narrow for an async
  copy (cp.async moves 4, 8 or 16 bytes).
- ``rowsum_kernel`` at num_stages=3: a loop of loads that feed no dot. Triton's
  latency assignment only picks loads that feed a dot (unless the loop itself asks
  for stages with ``tl.range(..., num_stages=N)``), so this loop is not pipelined.
- ``resident_a_kernel``: keeps its (256 x 16) A tile in registers and streams (16 x 32)
  B tiles through the loop: 2*256*32*16 FLOPs per 1 KiB loaded, 256 FLOP per byte,
  above the ridge point of sm_80 and sm_90 (a compute-bound tile). The plain GEMM's
  tile loads both operands every iteration: 64*64/(64+64) = 32 FLOP per byte, below
  them (a memory-bound tile, when no load is served by L2).
- ``ranged_rowsum_kernel``: the same loop asking for stages with
  ``tl.range(..., num_stages=3)``: pipelined, its load an async copy.
- ``strided_rowsum_kernel``: that loop reading every other column: each element is its
  own 16-bit load, too narrow for an async copy, so the pipeliner leaves the loop
  alone; Triton's remark at the load says its vectorization failed.
- ``copy_kernel``: no loop and no dot, so no main-loop intensity.
"""
import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, stride_cm,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.float16))


@triton.jit
def gemm_strided_kernel(a_ptr, b_ptr, c_ptr, K, stride_am, stride_ak, stride_bk, stride_cm,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.float16))


@triton.jit
def resident_a_kernel(a_ptr, b_ptr, c_ptr, N, stride_am, stride_bk, stride_cm,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :])
    for n in range(0, N, BN):
        rn = n + tl.arange(0, BN)
        b = tl.load(b_ptr + rk[:, None] * stride_bk + rn[None, :])
        c = tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], c.to(tl.float16))


@triton.jit
def rowsum_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def ranged_rowsum_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in tl.range(0, n_cols, BLOCK, num_stages=3):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def strided_rowsum_kernel(x_ptr, out_ptr, n_cols, stride_row, stride_col, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in tl.range(0, n_cols, BLOCK, num_stages=3):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride_row + cols * stride_col, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n), mask=offs < n)


if __name__ == "__main__":
    M = N = K = 512
    a = torch.randn(M, K, device=DEVICE, dtype=torch.float16)
    b = torch.randn(K, N, device=DEVICE, dtype=torch.float16)
    c = torch.empty(M, N, device=DEVICE, dtype=torch.float16)
    for stages in (3, 1):
        gemm_kernel[(M // 64, N // 64)](a, b, c, K, a.stride(0), b.stride(0), c.stride(0),
                                        BM=64, BN=64, BK=32, num_warps=4, num_stages=stages)
    a2 = torch.randn(2 * M, 2 * K, device=DEVICE, dtype=torch.float16)[::2, ::2]  # strides (4K, 2)
    gemm_strided_kernel[(M // 64, N // 64)](a2, b, c, K, a2.stride(0), a2.stride(1), b.stride(0), c.stride(0),
                                            BM=64, BN=64, BK=32, num_warps=4, num_stages=3)
    a16 = torch.randn(M, 16, device=DEVICE, dtype=torch.float16)
    b16 = torch.randn(16, N, device=DEVICE, dtype=torch.float16)
    resident_a_kernel[(M // 256,)](a16, b16, c, N, a16.stride(0), b16.stride(0), c.stride(0),
                                   BM=256, BN=32, BK=16, num_warps=4, num_stages=3)
    x = torch.randn(64, 4096, device=DEVICE, dtype=torch.float16)
    sums = torch.empty(64, device=DEVICE, dtype=torch.float32)
    rowsum_kernel[(64,)](x, sums, x.shape[1], x.stride(0), BLOCK=1024, num_stages=3)
    ranged_rowsum_kernel[(64,)](x, sums, x.shape[1], x.stride(0), BLOCK=1024)
    xs = x[:, ::2]
    strided_rowsum_kernel[(64,)](xs, sums, xs.shape[1], xs.stride(0), xs.stride(1), BLOCK=1024)
    y = torch.empty_like(x)
    copy_kernel[(x.numel() // 1024,)](x, y, x.numel(), BLOCK=1024)
