"""A kernel that makes LLVM abort the compiling process (SIGABRT): its inline
asm constraint string names four operands, the call passes one. An ordinary
kernel compiles first, so the run has something finished to keep."""
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


@triton.jit
def crash_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r,r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(x_ptr + offs, y)


if __name__ == "__main__":
    x = torch.zeros(128, device=DEVICE, dtype=torch.int32)
    add_kernel[(1,)](x, x, x, 128, BLOCK=128)
    crash_kernel[(1,)](x, BLOCK=128)
