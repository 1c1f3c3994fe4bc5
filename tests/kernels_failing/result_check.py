"""A tutorial-style script: launch, then check the result against torch. With
no GPU the tensors hold no values, so the check cannot run."""
import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


if __name__ == "__main__":
    x = torch.rand(4096, device=DEVICE)
    y = torch.rand(4096, device=DEVICE)
    out = torch.empty_like(x)
    add_kernel[(4,)](x, y, out, 4096, BLOCK=1024)
    torch.testing.assert_close(out, x + y)
    print("result_check: OK")
