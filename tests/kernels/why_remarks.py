"""Kernels that make Triton (3.6+) print remarks, compiled with ``triton.compile``
for sm_90 with no GPU, so the same script is both what ``irscope run`` captures and
what ``MLIR_ENABLE_DIAGNOSTICS=remarks python why_remarks.py`` prints.

``masked_copy``: fp16 loads and stores masked by ``offs < n`` with an ``n`` not known
to be a multiple of anything, so the mask allows one element per access and the
vectoriser says so ("vectorization fails vec = 1 ... mask is 1") for the load, made
in a ``@triton.jit`` helper (a remark with a call site), and for the store.
``fail``: the same masked load, then an instruction ptxas does not know, so the
compile fails in the cubin stage after the remark was emitted.
``crash``: the same masked load, then an inline asm whose constraints name four
operands for one, which makes LLVM abort the process after the remark was emitted.

    python why_remarks.py [ok|fail|crash]
"""
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget


@triton.jit
def _load_masked(ptr, offs, mask):
    return tl.load(ptr + offs, mask=mask)


@triton.jit
def masked_copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = _load_masked(src_ptr, offs, mask)
    tl.store(dst_ptr + offs, x * 2, mask=mask)


@triton.jit
def masked_then_bogus(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(src_ptr + offs, mask=mask)
    y = tl.inline_asm_elementwise("bogus $0, $1;", "=r,r", [x.to(tl.int32)], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(dst_ptr + offs, y, mask=mask)


@triton.jit
def masked_then_crash(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(src_ptr + offs, mask=mask)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r,r,r", [x.to(tl.int32)], dtype=tl.int32, is_pure=True,
                                  pack=1)
    tl.store(dst_ptr + offs, y, mask=mask)


SIGNATURE = {"src_ptr": "*fp16", "dst_ptr": "*fp16", "n": "i32", "BLOCK": "constexpr"}
TARGET = GPUTarget("cuda", 90, 32)


def compile_kernel(fn, signature=None):
    """Compile ``fn`` for sm_90 with BLOCK=1024 and 4 warps."""
    src = triton.compiler.ASTSource(fn=fn, signature=signature or SIGNATURE, constexprs={"BLOCK": 1024})
    return triton.compile(src, target=TARGET, options={"num_warps": 4})


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "ok"
    if which == "ok":
        compile_kernel(masked_copy)
    elif which == "fail":
        compile_kernel(masked_then_bogus, dict(SIGNATURE, dst_ptr="*i32"))
    else:
        compile_kernel(masked_then_crash, dict(SIGNATURE, dst_ptr="*i32"))
