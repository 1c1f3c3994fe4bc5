"""Matmul written with block pointers (tl.make_block_ptr + tl.advance), fixed constexpr tiles.

Shows tt.make_tensor_ptr / tt.advance with boundary checks and zero padding, and how the compiler
rewrites block pointers into ordinary pointer loads that it can pipeline; one compiled variant.
Set IRSCOPE_SAMPLE_SMALL=1 for tiny problem sizes (used by the CPU interpreter test).
"""
import os

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()
SMALL = os.environ.get("IRSCOPE_SAMPLE_SMALL", "0") not in ("", "0")


@triton.jit
def block_ptr_matmul_kernel(
        a_ptr, b_ptr, c_ptr,  #
        M, N, K,  #
        stride_am, stride_ak,  #
        stride_bk, stride_bn,  #
        stride_cm, stride_cn,  #
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,  #
):
    pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    a_block_ptr = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak),
                                    offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    b_block_ptr = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, stride_bn),
                                    offsets=(0, pid_n * BLOCK_N), block_shape=(BLOCK_K, BLOCK_N), order=(1, 0))
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        a = tl.load(a_block_ptr, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_block_ptr, boundary_check=(0, 1), padding_option="zero")
        accumulator = tl.dot(a, b, accumulator)
        a_block_ptr = tl.advance(a_block_ptr, (0, BLOCK_K))
        b_block_ptr = tl.advance(b_block_ptr, (BLOCK_K, 0))
    c = accumulator.to(tl.float16)

    c_block_ptr = tl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),
                                    offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N), block_shape=(BLOCK_M, BLOCK_N),
                                    order=(1, 0))
    tl.store(c_block_ptr, c, boundary_check=(0, 1))


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert a.shape[1] == b.shape[0], "Incompatible dimensions"
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N), )
    block_ptr_matmul_kernel[grid](
        a, b, c,  #
        M, N, K,  #
        a.stride(0), a.stride(1),  #
        b.stride(0), b.stride(1),  #
        c.stride(0), c.stride(1),  #
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,  #
        num_warps=8, num_stages=3,
    )
    return c


def main():
    torch.manual_seed(0)
    M, N, K = (160, 136, 100) if SMALL else (512, 384, 320)
    a = torch.randn((M, K), device=DEVICE, dtype=torch.float16)
    b = torch.randn((K, N), device=DEVICE, dtype=torch.float16)
    c_triton = matmul(a, b)

    if os.environ.get("IRSCOPE_COMPILE_ONLY"):  # irscope run with no GPU: tensors hold no values
        print("block_ptr_matmul: compile-only, numeric check skipped")
        return
    # Numeric check (all kernel launches are done). Reference accumulates in fp32 like the kernel.
    c_torch = torch.matmul(a.float(), b.float()).to(torch.float16)
    torch.testing.assert_close(c_triton, c_torch, atol=1e-2, rtol=1e-2)
    err = (c_triton.float() - c_torch.float()).abs().max().item()
    print(f"block_ptr_matmul: OK (max abs err {err:.1e})")


if __name__ == "__main__":
    main()
