"""Layer norm forward: per-row mean / variance / rstd in fp32, then scale by weight and add bias.

Shows three column loops over the same row (two reductions then the normalise-and-store pass),
fp16 <-> fp32 casts and rsqrt lowering; one program per row, one compiled variant.
Set IRSCOPE_SAMPLE_SMALL=1 for tiny problem sizes (used by the CPU interpreter test).
"""
import os

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()
SMALL = os.environ.get("IRSCOPE_SAMPLE_SMALL", "0") not in ("", "0")


@triton.jit
def _layer_norm_fwd_fused(
    X,  # pointer to the input
    Y,  # pointer to the output
    W,  # pointer to the weights
    B,  # pointer to the biases
    Mean,  # pointer to the mean
    Rstd,  # pointer to the 1/std
    stride,  # how much to increase the pointer when moving by 1 row
    N,  # number of columns in X
    eps,  # epsilon to avoid division by zero
    BLOCK_SIZE: tl.constexpr,
):
    # Map the program id to the row of X and Y it should compute.
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    # Compute mean
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    # Compute variance
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    # Write mean / rstd
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    # Normalize and apply linear transformation
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        # Write output
        tl.store(Y + cols, y, mask=mask)


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float):
    y = torch.empty_like(x)
    x_arg = x.reshape(-1, x.shape[-1])
    M, N = x_arg.shape
    mean = torch.empty((M, ), dtype=torch.float32, device=x.device)
    rstd = torch.empty((M, ), dtype=torch.float32, device=x.device)
    # Loop over the row in chunks of at most 1024 columns.
    BLOCK_SIZE = min(1024, triton.next_power_of_2(N))
    num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
    _layer_norm_fwd_fused[(M, )](x_arg, y, weight, bias, mean, rstd, x_arg.stride(0), N, eps, BLOCK_SIZE=BLOCK_SIZE,
                                 num_warps=num_warps)
    return y, mean, rstd


def main():
    torch.manual_seed(0)
    M, N = (8, 300) if SMALL else (512, 2500)
    eps = 1e-5
    dtype = torch.float16
    x = -2.3 + 0.5 * torch.randn((M, N), dtype=dtype, device=DEVICE)
    weight = torch.rand((N, ), dtype=dtype, device=DEVICE)
    bias = torch.rand((N, ), dtype=dtype, device=DEVICE)
    y_triton, mean, rstd = layer_norm(x, weight, bias, eps)

    if os.environ.get("IRSCOPE_COMPILE_ONLY"):  # irscope run with no GPU: tensors hold no values
        print("layer_norm: compile-only, numeric check skipped")
        return
    # Numeric check (all kernel launches are done).
    y_torch = torch.nn.functional.layer_norm(x.float(), (N, ), weight.float(), bias.float(), eps).to(dtype)
    x32 = x.float()
    torch.testing.assert_close(y_triton, y_torch, atol=1e-2, rtol=0)
    torch.testing.assert_close(mean, x32.mean(dim=1), atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(rstd, torch.rsqrt(x32.var(dim=1, unbiased=False) + eps), atol=1e-3, rtol=1e-3)
    err = (y_triton.float() - y_torch.float()).abs().max().item()
    print(f"layer_norm: OK (max abs err {err:.1e})")


if __name__ == "__main__":
    main()
