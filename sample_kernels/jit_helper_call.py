"""Bias + GELU + row-sum kernel built from @triton.jit helpers defined in this file.

Calls _load_tile (tuple return), _gelu and the library helpers tl.cdiv / tl.sigmoid / tl.sum: the
IR before the inliner pass has tt.call sites; the final TTIR keeps them as callsite(...) locations.
Set IRSCOPE_SAMPLE_SMALL=1 for tiny problem sizes (used by the CPU interpreter test).
"""
import os

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()
SMALL = os.environ.get("IRSCOPE_SAMPLE_SMALL", "0") not in ("", "0")


@triton.jit
def _load_tile(ptr, rows, cols, stride_row, n_rows, n_cols):
    """Load a masked (len(rows), len(cols)) tile as fp32; also return the mask."""
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    tile = tl.load(ptr + rows[:, None] * stride_row + cols[None, :], mask=mask, other=0.0)
    return tile.to(tl.float32), mask


@triton.jit
def _gelu(x):
    """GELU, tanh approximation: 0.5 * x * (1 + tanh(z)) == x * sigmoid(2 * z)."""
    z = 0.7978845608028654 * (x + 0.044715 * x * x * x)  # sqrt(2 / pi) * (x + 0.044715 x^3)
    return x * tl.sigmoid(2.0 * z)


@triton.jit
def bias_gelu_rowsum_kernel(x_ptr, bias_ptr, out_ptr, rowsum_ptr,  #
                            M, N, stride_xm, stride_om,  #
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(axis=0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    row_sum = tl.zeros((BLOCK_M, ), dtype=tl.float32)
    for j in range(0, tl.cdiv(N, BLOCK_N)):
        cols = j * BLOCK_N + tl.arange(0, BLOCK_N)
        x, mask = _load_tile(x_ptr, rows, cols, stride_xm, M, N)
        b = tl.load(bias_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
        y = _gelu(x + b[None, :])
        y = tl.where(mask, y, 0.0)
        row_sum += tl.sum(y, axis=1)
        out_ptrs = out_ptr + rows[:, None] * stride_om + cols[None, :]
        tl.store(out_ptrs, y.to(out_ptr.type.element_ty), mask=mask)
    tl.store(rowsum_ptr + rows, row_sum, mask=rows < M)


def bias_gelu_rowsum(x: torch.Tensor, bias: torch.Tensor):
    M, N = x.shape
    assert x.stride(1) == 1 and bias.shape == (N, )
    out = torch.empty_like(x)
    row_sum = torch.empty((M, ), dtype=torch.float32, device=x.device)
    BLOCK_M, BLOCK_N = 32, 128
    grid = (triton.cdiv(M, BLOCK_M), )
    bias_gelu_rowsum_kernel[grid](x, bias, out, row_sum, M, N, x.stride(0), out.stride(0),  #
                                  BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
    return out, row_sum


def main():
    torch.manual_seed(0)
    M, N = (19, 200) if SMALL else (1000, 1536)
    x = torch.randn((M, N), dtype=torch.float16, device=DEVICE)
    bias = torch.randn((N, ), dtype=torch.float16, device=DEVICE)
    out, row_sum = bias_gelu_rowsum(x, bias)

    if os.environ.get("IRSCOPE_COMPILE_ONLY"):  # irscope run with no GPU: tensors hold no values
        print("jit_helper_call: compile-only, numeric check skipped")
        return
    # Numeric check (all kernel launches are done).
    y_ref = torch.nn.functional.gelu(x.float() + bias.float(), approximate="tanh")
    torch.testing.assert_close(out, y_ref.to(torch.float16), atol=1e-2, rtol=1e-2)
    torch.testing.assert_close(row_sum, y_ref.sum(dim=1), atol=1e-2, rtol=1e-4)
    err = (out.float() - y_ref).abs().max().item()
    print(f"jit_helper_call: OK (max abs err {err:.1e})")


if __name__ == "__main__":
    main()
