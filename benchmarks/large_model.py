"""A large model script, as a user would hand it to ``irscope run``: a transformer-like
stack in bf16 (8 layers of hidden 4096 and MLP 16384 by default: 1.61 G parameters,
3.0 GiB of weights), a forward over one batch, and one small Triton kernel (an RMS
norm of the output rows), so ``irscope run`` captures a real launch.

    irscope run benchmarks/large_model.py --target sm_90 [-- --layers 8 --batch 4 --seq 128]
    python benchmarks/large_model.py --device cpu     # real tensors on the host, no Triton launch

``--device cpu`` runs the same torch part on real tensors in host memory (real random
init, the same forward), with the norm done by torch instead of the kernel: the floor
of what host-backed stand-in CUDA tensors would cost, which would hold the same data
and do the same math on the host (benchmarks/bench_compile_only_tensors.py).

``--timings FILE`` writes the script's own figures as JSON: seconds to build the
model, seconds of the forward, seconds of the norm (the kernel's compile, in a
compile-only run), parameter count, weight bytes, and the process's peak
RSS (``VmHWM``) at the end.
"""

import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from procmem import status_mb  # noqa: E402  (benchmarks/ is not a package)


class Block(nn.Module):
    """Pre-norm attention (q, k, v, o projections) and a two-matrix GELU MLP."""

    def __init__(self, hidden: int, ffn: int, heads: int, device: str, dtype: torch.dtype) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(hidden, device=device, dtype=dtype)
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False, device=device, dtype=dtype)
        self.out = nn.Linear(hidden, hidden, bias=False, device=device, dtype=dtype)
        self.norm2 = nn.LayerNorm(hidden, device=device, dtype=dtype)
        self.up = nn.Linear(hidden, ffn, bias=False, device=device, dtype=dtype)
        self.down = nn.Linear(ffn, hidden, bias=False, device=device, dtype=dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.out(a.transpose(1, 2).reshape(b, s, h))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


def build(layers: int, hidden: int, ffn: int, heads: int, device: str) -> nn.Sequential:
    """The model, its weights initialised by torch's default (random) init."""
    return nn.Sequential(*(Block(hidden, ffn, heads, device, torch.bfloat16) for _ in range(layers)))


def rms_norm_rows(y: torch.Tensor) -> torch.Tensor:
    """Each row of ``y`` divided by its RMS: the Triton kernel on CUDA, torch on the host."""
    if y.device.type == "cpu":
        return (y.float() * torch.rsqrt(y.float().pow(2).mean(-1, keepdim=True) + 1e-6)).to(y.dtype)
    import triton
    import triton.language as tl

    @triton.jit
    def rms_norm_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
        r = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + 1e-6)
        tl.store(out_ptr + row * n_cols + cols, (x * r).to(out_ptr.dtype.element_ty), mask=mask)

    y2 = y.reshape(-1, y.shape[-1]).contiguous()
    out = torch.empty_like(y2)
    rms_norm_kernel[(y2.shape[0],)](y2, out, y2.shape[1], BLOCK=triton.next_power_of_2(y2.shape[1]))
    return out.view_as(y)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--ffn", type=int, default=16384)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--timings", help="write the script's own figures here (JSON)")
    args = ap.parse_args()
    torch.manual_seed(0)
    t0 = time.perf_counter()
    model = build(args.layers, args.hidden, args.ffn, args.heads, args.device)
    t1 = time.perf_counter()
    x = torch.randn(args.batch, args.seq, args.hidden, device=args.device, dtype=torch.bfloat16)
    with torch.no_grad():
        h = model(x)
        t2 = time.perf_counter()
        y = rms_norm_rows(h)
    t3 = time.perf_counter()
    params = sum(p.numel() for p in model.parameters())
    figures = {
        "device": args.device, "layers": args.layers, "hidden": args.hidden, "ffn": args.ffn, "heads": args.heads,
        "batch": args.batch, "seq": args.seq, "parameters": params,
        "weight_gib": params * 2 / 2 ** 30, "forward_gflop": 2 * params * args.batch * args.seq / 1e9,
        "build_s": t1 - t0, "forward_s": t2 - t1, "norm_s": t3 - t2, "out_shape": list(y.shape),
        "peak_rss_mib": status_mb("VmHWM"), "torch": torch.__version__,
    }
    if args.device == "cpu":  # real data: a value proves the forward ran
        figures["out_rms"] = math.sqrt(float(y.float().pow(2).mean()))
    print(json.dumps(figures))
    if args.timings:
        with open(args.timings, "w") as f:
            json.dump(figures, f)


if __name__ == "__main__":
    main()
