"""Vector add: the smallest useful Triton kernel (one masked, vectorised load/add/store).

A single compiled variant; a good baseline for reading every stage TTIR -> TTGIR -> LLIR -> PTX.
Set IRSCOPE_SAMPLE_SMALL=1 for tiny problem sizes (used by the CPU interpreter test).
"""
import os

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()
SMALL = os.environ.get("IRSCOPE_SAMPLE_SMALL", "0") not in ("", "0")


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    output = torch.empty_like(x)
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]), )
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output


def main():
    torch.manual_seed(0)
    size = 4099 if SMALL else 98432
    x = torch.rand(size, device=DEVICE)
    y = torch.rand(size, device=DEVICE)
    output_triton = add(x, y)

    if os.environ.get("IRSCOPE_COMPILE_ONLY"):  # irscope run with no GPU: tensors hold no values
        print("vector_add: compile-only, numeric check skipped")
        return
    # Numeric check (all kernel launches are done).
    output_torch = x + y
    torch.testing.assert_close(output_triton, output_torch, atol=0, rtol=0)
    err = (output_triton - output_torch).abs().max().item()
    print(f"vector_add: OK (max abs err {err:.1e})")


if __name__ == "__main__":
    main()
