"""Compile the kernels of tests/data/ir/kernels.py and write the IR fixtures.

Run with the Python of a virtualenv holding Triton (3.2 or later); no GPU needed:

    .venv/bin/python scripts/make_ir_fixtures.py
    .venvs/triton-3.2/bin/python scripts/make_ir_fixtures.py

Writes ``tests/data/ir/<triton-version>/<kernel>_<target>/`` with ``.ttir .ttgir
.llir .ptx .sass`` (SASS from ``nvdisasm -g -c``) and, for a few kernels only (size),
``mlir_passes.txt`` (the raw ``MLIR_ENABLE_DUMP`` stream) and ``llvm_passes.txt``
(the raw ``LLVM_IR_ENABLE_DUMP`` stream).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "ir"
KERNELS_FILE = DATA / "kernels.py"

# kernel key -> (function name, [(param, type or constexpr value)], compile options)
KERNELS = {
    "add": ("add_kernel",
            [("x_ptr", "*fp32"), ("y_ptr", "*fp32"), ("out_ptr", "*fp32"),
             ("n_elements", "i32"), ("BLOCK", 256)],
            {"num_warps": 4}),
    "softmax": ("softmax_kernel",
                [("out_ptr", "*fp32"), ("in_ptr", "*fp32"), ("in_stride", "i32"),
                 ("out_stride", "i32"), ("n_cols", "i32"), ("BLOCK", 256)],
                {"num_warps": 4}),
    "matmul": ("matmul_kernel",
               [("a_ptr", "*fp16"), ("b_ptr", "*fp16"), ("c_ptr", "*fp16"), ("M", "i32"),
                ("N", "i32"), ("K", "i32"), ("stride_am", "i32"), ("stride_bk", "i32"),
                ("stride_cm", "i32"), ("BM", 64), ("BN", 32), ("BK", 32)],
               {"num_warps": 4, "num_stages": 3}),
    "helper": ("helper_kernel",
               [("x_ptr", "*fp32"), ("out_ptr", "*fp32"), ("n", "i32"), ("BLOCK", 256)],
               {"num_warps": 4}),
    "attn": ("attn_kernel",
             [("Q", "*fp16"), ("K", "*fp16"), ("V", "*fp16"), ("Out", "*fp16"),
              ("stride_qm", "i32"), ("stride_kn", "i32"), ("stride_vn", "i32"),
              ("stride_om", "i32"), ("N_CTX", "i32"), ("sm_scale", "fp32"),
              ("BLOCK_M", 64), ("BLOCK_N", 32), ("HEAD_DIM", 16)],
             {"num_warps": 4, "num_stages": 2}),
}
TARGETS = {"sm90": 90, "sm80": 80}
# Pass dumps are large (hundreds of kB per kernel): keep only these.
MLIR_DUMPS = ("add_sm90", "helper_sm80")
# The LLVM stream is ~0.6 MB even for the vector add: one version only.
LLVM_DUMPS = {"3.6": ("add_sm80",)}
STAGES = ("ttir", "ttgir", "llir", "ptx")


def _load_kernels():
    spec = importlib.util.spec_from_file_location("irscope_fixture_kernels", KERNELS_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _version() -> tuple[int, int]:
    import triton

    major, minor = triton.__version__.split(".")[:2]
    return int(major), int(minor)


def _source(fn, params):
    """Build an ASTSource with the argument names of the running Triton version."""
    from triton.compiler import ASTSource

    consts = {name: val for name, val in params if not isinstance(val, str)}
    if _version() >= (3, 3):
        signature = {name: (val if isinstance(val, str) else "constexpr") for name, val in params}
        attrs = {(i,): [["tt.divisibility", 16]]
                 for i, (_, val) in enumerate(params) if isinstance(val, str) and val.startswith("*")}
        return ASTSource(fn, signature=signature, constexprs=consts, attrs=attrs)
    from triton.backends.compiler import AttrsDescriptor

    signature = {name: val for name, val in params if isinstance(val, str)}
    hints = {i: 16 for i, (_, val) in enumerate(params) if isinstance(val, str) and val.startswith("*")}
    return ASTSource(fn, signature=signature, constants=consts, attrs=AttrsDescriptor.from_hints(hints))


def _target(cc: int):
    try:
        from triton.backends.compiler import GPUTarget
    except ImportError:  # pragma: no cover - older layouts
        from triton.compiler import GPUTarget
    return GPUTarget("cuda", cc, 32)


def _compile(fn, params, options, cc, env: dict[str, str], stderr_path: Path | None):
    """Compile once; with ``stderr_path`` set, fd 2 goes to that file meanwhile."""
    import triton

    saved_env = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    saved_fd = None
    if stderr_path is not None:
        sys.stderr.flush()
        saved_fd = os.dup(2)
        out = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, 2)
        os.close(out)
    try:
        return triton.compile(_source(fn, params), target=_target(cc), options=dict(options))
    finally:
        if saved_fd is not None:
            sys.stderr.flush()
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _nvdisasm() -> str:
    import triton

    return str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "nvdisasm")


def make(out_root: Path, only: set[str] | None) -> None:
    """Compile every kernel for every target and write its fixture directory."""
    import triton

    kernels = _load_kernels()
    version_dir = out_root / triton.__version__
    llvm_dumps = LLVM_DUMPS.get(".".join(triton.__version__.split(".")[:2]), ())
    for key, (fn_name, params, options) in KERNELS.items():
        fn = getattr(kernels, fn_name)
        for tname, cc in TARGETS.items():
            case = f"{key}_{tname}"
            if only and case not in only:
                continue
            dest = version_dir / case
            if dest.exists():
                shutil.rmtree(dest)
            dest.mkdir(parents=True)
            with tempfile.TemporaryDirectory() as cache:
                base = {"TRITON_CACHE_DIR": cache, "TRITON_ALWAYS_COMPILE": "1"}
                mlir = dest / "mlir_passes.txt" if case in MLIR_DUMPS else None
                env = dict(base, MLIR_ENABLE_DUMP="1") if mlir else base
                compiled = _compile(fn, params, options, cc, env, mlir)
            if case in llvm_dumps:
                # LLVM_IR_ENABLE_DUMP turns on LLVM's global -print-after-all, which then
                # stays on for the rest of the process: dump in a child process.
                subprocess.run([sys.executable, __file__, "--llvm-dump", case,
                                str(dest / "llvm_passes.txt")], check=True)
            for stage in STAGES:
                (dest / f"{fn_name}.{stage}").write_text(compiled.asm[stage])
            cubin = dest / f"{fn_name}.cubin"
            cubin.write_bytes(compiled.asm["cubin"])
            sass = subprocess.run([_nvdisasm(), "-g", "-c", str(cubin)], check=True,
                                  capture_output=True, text=True).stdout
            (dest / f"{fn_name}.sass").write_text(sass)
            cubin.unlink()
            size = sum(p.stat().st_size for p in dest.iterdir())
            print(f"{triton.__version__} {case}: {size / 1024:.0f} kB")


def _llvm_dump(case: str, path: Path) -> None:
    key, tname = case.rsplit("_", 1)
    fn_name, params, options = KERNELS[key]
    fn = getattr(_load_kernels(), fn_name)
    with tempfile.TemporaryDirectory() as cache:
        env = {"TRITON_CACHE_DIR": cache, "TRITON_ALWAYS_COMPILE": "1", "LLVM_IR_ENABLE_DUMP": "1"}
        _compile(fn, params, options, TARGETS[tname], env, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DATA, help="root of the fixture tree")
    parser.add_argument("--only", nargs="*", help="cases to build, e.g. add_sm90")
    parser.add_argument("--llvm-dump", nargs=2, metavar=("CASE", "PATH"),
                        help=argparse.SUPPRESS)  # internal: the child process of make()
    args = parser.parse_args(argv)
    if args.llvm_dump:
        _llvm_dump(args.llvm_dump[0], Path(args.llvm_dump[1]))
        return 0
    make(args.out, set(args.only) if args.only else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
