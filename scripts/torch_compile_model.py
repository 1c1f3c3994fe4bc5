"""A small model compiled with torch.compile: Inductor generates and compiles
several Triton kernels (fused pointwise, reductions, layer norm), some of them
in parallel worker processes. Used by scripts/gpu_check.sh to show that
`irscope run` captures all of them. Needs a GPU."""

import torch


class Block(torch.nn.Module):
    def __init__(self, d=256):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        h = self.norm(x)
        h = torch.nn.functional.gelu(self.up(h))
        h = self.down(h)
        return torch.softmax(x + h, dim=-1)


def main():
    torch.manual_seed(0)
    model = Block().cuda()
    x = torch.randn(64, 256, device="cuda")
    ref = model(x)
    compiled = torch.compile(model)
    out = compiled(x)
    torch.testing.assert_close(out, ref, atol=1e-4, rtol=1e-3)
    print("torch_compile_model: OK")


if __name__ == "__main__":
    main()
