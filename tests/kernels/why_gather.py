"""Two copies of BLOCK fp16 elements per program: one gathers them with a runtime
stride (Triton cannot prove it is 1, so every element is its own 16-bit load), the
other copies contiguous elements (eight per 128-bit load). The stores are contiguous
in both, so both loads get the same wide layout (eight elements per thread): the
gather's layout could hold 128-bit loads that its addresses do not allow."""
import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def gather_kernel(src_ptr, dst_ptr, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src_ptr + offs * stride)
    tl.store(dst_ptr + offs, x)


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(src_ptr + offs, mask=mask)
    tl.store(dst_ptr + offs, x, mask=mask)


if __name__ == "__main__":
    n = 8192
    src = torch.randn(2 * n, device=DEVICE, dtype=torch.float16)
    dst = torch.empty(n, device=DEVICE, dtype=torch.float16)
    gather_kernel[(n // 1024,)](src, dst, 2, BLOCK=1024)
    copy_kernel[(n // 1024,)](src, dst, n, BLOCK=1024)
