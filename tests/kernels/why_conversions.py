"""Layout conversions of every kind: through registers, by warp shuffles, through
shared memory (tests/test_conversions.py captures this compile-only for sm_90 and
sm_80 and checks irscope's answer against Triton's shared-memory allocation)."""
import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def row_sums_kernel(x_ptr, sums_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    """A row sum stored as a vector, then broadcast back. The sums move to the vector
    layout through shared memory (four warps), by warp shuffles (one warp, rows of 8)
    or not at all (one warp, rows of 4: each lane already holds its row)."""
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    s = tl.sum(x, axis=1)
    tl.store(sums_ptr + rows, s)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], x - s[:, None])


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    """A tile stored transposed: each row is spread over other warps afterwards."""
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    tl.store(y_ptr + cols[:, None] * M + rows[None, :], tl.trans(x))


@triton.jit
def chained_dot_kernel(a_ptr, b_ptr, c_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """Two GEMMs in a row (attention's P @ V): the first result becomes the second
    dot's A operand, and the last result is stored from a blocked layout."""
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    c = tl.load(c_ptr + n[:, None] * N + n[None, :])
    p = tl.dot(a, b).to(tl.float16)
    o = tl.dot(p, c)
    tl.store(o_ptr + m[:, None] * N + n[None, :], o.to(tl.float16))


if __name__ == "__main__":
    x = torch.randn(32, 32, device=DEVICE, dtype=torch.float32)
    sums = torch.empty(32, device=DEVICE, dtype=torch.float32)
    out = torch.empty_like(x)
    row_sums_kernel[(1,)](x, sums, out, M=32, N=32, num_warps=4)  # across warps: shared memory
    row_sums_kernel[(1,)](x, sums, out, M=32, N=32, num_warps=1)  # one warp, but two register<->lane swaps
    row_sums_kernel[(1,)](x, sums, out, M=32, N=8, num_warps=1)  # one warp, one swap: warp shuffles
    row_sums_kernel[(1,)](x, sums, out, M=32, N=4, num_warps=1)  # each thread keeps its row: registers
    y = torch.empty_like(x)
    transpose_kernel[(1,)](x, y, M=32, N=32, num_warps=4)
    a = torch.randn(64, 32, device=DEVICE, dtype=torch.float16)
    b = torch.randn(32, 64, device=DEVICE, dtype=torch.float16)
    c = torch.randn(64, 64, device=DEVICE, dtype=torch.float16)
    o = torch.empty(64, 64, device=DEVICE, dtype=torch.float16)
    chained_dot_kernel[(1,)](a, b, c, o, M=64, N=64, K=32, num_warps=4)
