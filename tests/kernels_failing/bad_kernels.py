"""Two kernels that fail the ordinary way: a frontend error (a name that does
not exist, on the fourth line of the kernel) and a ptxas error (an instruction
that does not exist). The script catches the first so the second compiles too."""
import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def frontend_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, x + undefined_name)


@triton.jit
def ptxas_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("bogus $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(x_ptr + offs, y)


if __name__ == "__main__":
    x = torch.zeros(128, device=DEVICE, dtype=torch.int32)
    try:
        frontend_kernel[(1,)](x, BLOCK=128)
    except Exception as exc:
        print("frontend_kernel failed:", type(exc).__name__)
    ptxas_kernel[(1,)](x, BLOCK=128)
