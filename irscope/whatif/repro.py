"""A standalone reproducer script for one captured compile (``irscope repro``).

:func:`repro_script` turns a :class:`~irscope.whatif.compile_spec.CompileSpec` into the
text of one Python script that needs only Triton (and torch to launch):

- with a usable GPU it launches the kernel on random inputs (the captured shapes and
  dtypes and the captured grid where the capture knows them; otherwise sizes that give
  the same specialisation: 16-byte aligned pointers and multiples of 16 where Triton
  hinted divisibility, 1 where it specialised on 1, other values elsewhere), and the
  launch compiles for that GPU as any launch does;
- with no GPU (or ``--compile-only``, or under ``irscope run`` with no GPU) it compiles
  the kernel for the captured target with ``triton.compile``, from the captured
  signature, constexprs, specialisation attributes and options, so the compile is the
  captured one (``irscope run repro.py`` gives a capture equal to the original up to
  source locations and file names).
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from irscope.core.bundle import open_bundle
from irscope.errors import IrscopeError
from irscope.whatif.compile_spec import CompileSpec, FunctionRef
from irscope.whatif.equivalence import Difference, compile_differences

if TYPE_CHECKING:
    from irscope.core.capture import Capture

_TARGET_RE = re.compile(r"^sm_(\d+)$")

# The torch dtype of each Triton pointer element type a reproducer can allocate.
TORCH_DTYPES: dict[str, str] = {
    "fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
    "i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2", "fp8e4b8": "float8_e4m3fnuz", "fp8e5b16": "float8_e5m2fnuz",
}


def _literal(value: Any) -> str:
    """A Python expression for a captured value: a ``tl`` dtype given as its repr
    (``triton.language.float16``) becomes that expression, a function passed as a
    constexpr its name, anything else its repr."""
    if isinstance(value, str) and re.fullmatch(r"triton\.language\.\w+", value):
        return value
    if isinstance(value, FunctionRef):  # a @triton.jit function the module defines
        return value.name
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({repr(value)!r})"  # inf, -inf, nan: no literal of their own
    if isinstance(value, (bool, int, float, str)) or value is None:
        return repr(value)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_literal(v) for v in value)
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    raise IrscopeError(f"cannot write the captured value {value!r} into a script")


def target_tuple(target: str) -> tuple[str, int | str, int]:
    """``GPUTarget``'s arguments for a canonical target name: ``sm_90`` -> ("cuda", 90, 32),
    ``gfx942`` -> ("hip", "gfx942", 64)."""
    m = _TARGET_RE.match(target)
    if m:
        return ("cuda", int(m.group(1)), 32)
    if target.startswith("gfx"):
        return ("hip", target, 64)
    raise IrscopeError(f"unknown target {target!r} (expected e.g. sm_90 or gfx942)")


def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides of ``shape``."""
    out, step = [], 1
    for d in reversed(shape):
        out.append(step)
        step *= max(d, 1)
    return tuple(reversed(out))


def _dict_block(name: str, items: dict[str, Any], comment: str) -> str:
    if not items:
        return f"{name} = {{}}  # {comment}\n"
    rows = "".join(f"    {k!r}: {_literal(v)},\n" for k, v in items.items())
    return f"# {comment}\n{name} = {{\n{rows}}}\n"


def _header(spec: CompileSpec, bundle: str | None) -> str:
    where = f"{bundle}, capture #{spec.capture_id}" if bundle else f"capture #{spec.capture_id}"
    lines = [
        "#!/usr/bin/env python3",
        f'"""Reproducer of the Triton kernel {spec.kernel} ({where}; target {spec.target},',
        f"Triton {spec.triton_version or '?'}; variant {spec.variant or '-'}), written by ``irscope repro``.",
        "",
        "    python THIS.py                  # a GPU: launch on random inputs; no GPU: compile only",
        "    python THIS.py --compile-only   # compile for the captured target (no GPU needed)",
        "    irscope run THIS.py -o out.irscope   # capture it again (no GPU: compile only)",
        "",
        "The kernel and its helpers are the captured source; the signature, specialisation",
        "(divisibility by 16, arguments equal to 1), constexprs and options are the captured ones.",
    ]
    if spec.notes:
        lines += ["", "Not recovered from the capture:"] + [f"- {n}" for n in spec.notes]
    lines.append('"""')
    return "\n".join(lines) + "\n"


_RUNNER = r'''

def _version():
    return tuple(int(x) for x in re.findall(r"\d+", triton.__version__)[:2])


def _fn():
    return globals()[KERNEL]


def _options(backend_options=None):
    """The captured options this Triton knows (a newer or older Triton lacks some)."""
    if backend_options is None:
        return dict(OPTIONS)
    return {k: v for k, v in OPTIONS.items() if k in backend_options}


def compile_only(target=TARGET):
    """Compile for ``target`` with ``triton.compile``: no GPU, no launch."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource, make_backend

    fn = _fn()
    names = list(fn.arg_names)
    gpu_target = GPUTarget(*target)
    fields = getattr(type(make_backend(gpu_target).parse_options({})), "__dataclass_fields__", None)
    if _version() >= (3, 3):
        signature = {n: ("constexpr" if n in CONSTEXPRS else SIGNATURE[n]) for n in names}
        constexprs = {(names.index(n),): v for n, v in CONSTEXPRS.items()}
        constexprs = dict(sorted({**constexprs, **TUPLE_CONSTEXPRS}.items()))  # in argument order, as Triton's
        attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in DIVISIBLE}
        attrs.update({path: [["tt.divisibility", 16]] for path in TUPLE_DIVISIBLE})
        src = ASTSource(fn, signature, constexprs=constexprs, attrs=attrs)
    else:
        # Triton 3.0-3.2: the signature holds every runtime argument (those equal to 1
        # too, typed), the constants every constexpr and every argument equal to 1.
        signature = {n: SIGNATURE_TYPES.get(n, SIGNATURE[n]) for n in names
                     if n not in CONSTEXPRS or n in EQUAL_TO_1}
        try:
            from triton.backends.compiler import AttrsDescriptor

            hints = {names.index(n): 16 for n in DIVISIBLE}
            hints.update({names.index(n): 1 for n in EQUAL_TO_1})
            attrs = AttrsDescriptor.from_hints(hints)
        except ImportError:  # Triton 3.0: the descriptor lists parameter indices
            from triton.compiler.compiler import AttrsDescriptor

            attrs = AttrsDescriptor(tuple(names.index(n) for n in DIVISIBLE),
                                    tuple(names.index(n) for n in EQUAL_TO_1))
        src = ASTSource(fn, signature, constants=dict(CONSTEXPRS), attrs=attrs)
    kernel = triton.compile(src, target=gpu_target, options=_options(fields))
    print("compiled %s for %s" % (KERNEL, gpu_target))
    return kernel


def _int_value(name, typ):
    """A value Triton specialises as captured: a multiple of 16 where it hinted
    divisibility, another value elsewhere, in the range of the captured type."""
    base = 2 ** 31 if typ == "i64" else (2 ** 63 if typ == "u64" else 0)
    if name in NUMBERS:
        return NUMBERS[name]
    return base + (64 if name in DIVISIBLE else 67)


def _tensor(torch, name, typ, device):
    """Random values in the captured shape, strides and dtype (else 2**20 elements of
    the pointer's element type), aligned as Triton saw the pointer."""
    shape, stride, dtype_name = TENSORS.get(name) or ((1 << 20,), (1,), TORCH_DTYPES.get(typ[1:], "float32"))
    dtype = getattr(torch, dtype_name)
    size = 1 + sum((d - 1) * s for d, s in zip(shape, stride)) if all(shape) else 0
    extra = 0 if name in DIVISIBLE else 1  # a pointer Triton saw unaligned: one element in
    if dtype.is_floating_point:
        flat = torch.randn(size + extra, device=device).to(dtype)
    elif dtype == torch.bool:
        flat = torch.rand(size + extra, device=device) < 0.5
    else:
        flat = torch.randint(0, 16, (size + extra,), device=device).to(dtype)
    return flat.as_strided(shape, stride, extra)


def _argument(torch, name, typ, path, device):
    """A launch value of Triton type ``typ`` (a tuple type: a tuple of values; ``path``:
    where the value sits, for the tuple elements Triton made constants)."""
    if isinstance(typ, tuple):
        return tuple(TUPLE_CONSTEXPRS[path + (i,)] if path + (i,) in TUPLE_CONSTEXPRS
                     else _argument(torch, "%s[%d]" % (name, i), t, path + (i,), device) for i, t in enumerate(typ))
    if typ.startswith("*"):
        return _tensor(torch, name, typ, device)
    if typ.startswith("fp") or typ.startswith("bf"):
        return NUMBERS.get(name, 0.5)
    if typ[:1] in ("i", "u"):
        return _int_value(name, typ)
    sys.exit("%s: cannot launch an argument of type %s; run with --compile-only" % (name, typ))


def launch():
    """Launch on random inputs, on the GPU this process has."""
    import torch

    device = "cuda"
    # Kernels that build tensor descriptors (tl.make_tensor_descriptor) need scratch memory.
    if hasattr(triton, "set_allocator"):  # Triton 3.3+
        triton.set_allocator(lambda size, align, stream: torch.empty(size, device=device, dtype=torch.int8))
    fn = _fn()
    args = []
    for name in fn.arg_names:
        if name in CONSTEXPRS and name not in EQUAL_TO_1:
            continue
        if name in EQUAL_TO_1:
            args.append(1)
            continue
        args.append(_argument(torch, name, SIGNATURE[name], (fn.arg_names.index(name),), device))
    constexprs = {n: v for n, v in CONSTEXPRS.items() if n not in EQUAL_TO_1}
    fn[GRID](*args, **constexprs, **_options(None))
    torch.cuda.synchronize()
    print("launched %s on grid %s" % (KERNEL, GRID))


def _real_gpu():
    """Whether this process has a GPU to launch on (irscope's compile-only stand-in
    driver is not one)."""
    try:
        import triton.runtime.driver as drv

        active = sys.modules["triton.runtime.driver"].driver.active
        if type(active).__module__.startswith("irscope"):
            return False
        active.get_current_target()
        return True
    except Exception:  # any failure of Triton's driver probe means no usable GPU
        return False


def _parse_target(text):
    m = re.fullmatch(r"(?:sm_?)?(\d+)a?", text)
    if m:
        return ("cuda", int(m.group(1)), 32)
    if text.startswith("gfx"):
        return ("hip", text, 64)
    sys.exit("unknown target %r (expected e.g. sm_90 or gfx942)" % text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--compile-only", action="store_true", help="compile for the target, never launch")
    parser.add_argument("--target", help="compile for this target instead of the captured one (sm_80, gfx942)")
    opts = parser.parse_args(argv)
    if opts.compile_only or opts.target or not _real_gpu():
        compile_only(_parse_target(opts.target) if opts.target else TARGET)
    else:
        launch()


if __name__ == "__main__":
    main()
'''


def repro_script(spec: CompileSpec, bundle: str | None = None) -> str:
    """The reproducer's text for ``spec`` (``bundle`` names where it came from, in the
    docstring only). Pure: the same spec gives the same text."""
    signature = {a.name: a.elements if a.elements is not None else a.type for a in spec.args}
    constexprs = spec.constexprs
    tensors = {a.name: (tuple(a.shape), tuple(a.stride) if a.stride is not None else _contiguous(a.shape),
                        a.dtype or TORCH_DTYPES.get(a.type[1:], "float32"))
               for a in spec.args if a.shape is not None and a.pointer}
    numbers = {a.name: a.value for a in spec.args if a.runtime and not a.equal_to_1 and not a.pointer
               and isinstance(a.value, (int, float)) and not isinstance(a.value, bool)}
    types_old = {a.name: a.runtime_type or "i32" for a in spec.args if a.equal_to_1}
    grid = tuple(spec.grid) if spec.grid else (1,)  # one program: safe for any sizes picked
    parts = [
        _header(spec, bundle),
        "import argparse\nimport re\nimport sys\n\n",
        spec.source,
        "\n\n# -- the captured compile ------------------------------------------------------\n",
        f"KERNEL = {spec.kernel!r}\n",
        f"TARGET = {target_tuple(spec.target)!r}\n",
        _dict_block("SIGNATURE", signature, "every parameter's Triton type ('constexpr': a constant of the compile)"),
        _dict_block("CONSTEXPRS", constexprs, "declared constexprs, and arguments Triton specialised to 1"),
        f"EQUAL_TO_1 = {list(spec.equal_to_1)!r}  # runtime arguments Triton saw equal to 1\n",
        f"DIVISIBLE = {list(spec.divisible)!r}  # hinted divisible by 16 (pointers: 16-byte aligned)\n",
        f"TUPLE_CONSTEXPRS = {_literal(dict(spec.tuple_constexprs))}  # tuple elements Triton made constants, by path\n",
        f"TUPLE_DIVISIBLE = {list(spec.tuple_divisible)!r}  # tuple elements hinted divisible by 16, by path\n",
        f"SIGNATURE_TYPES = {types_old!r}  # Triton < 3.3 types the arguments equal to 1\n",
        _dict_block("OPTIONS", dict(spec.options), "compile options as captured"),
        f"GRID = {grid!r}  # {'as captured' if spec.grid else 'the capture holds no grid: one program'}\n",
        _dict_block("TENSORS", tensors, "(shape, strides, dtype) of each tensor at the captured launch"
                    + ("" if tensors else " (not recorded: 2**20 elements each)")),
        _dict_block("NUMBERS", numbers, "numbers passed at the captured launch"
                    + ("" if numbers else " (not recorded: values that specialise the same)")),
        f"TORCH_DTYPES = {TORCH_DTYPES!r}\n",
        _RUNNER,
    ]
    return "".join(parts)


# -- checking a reproducer -----------------------------------------------------------------

@dataclass(frozen=True)
class RoundTrip:
    """What ``irscope run`` of a reproducer gave, against the capture it came from."""

    bundle: str
    """The bundle holding the reproducer's capture."""
    capture_id: int | None
    """Its capture (None when the script compiled nothing)."""
    differences: tuple[Difference, ...]
    """How the two compiles differ (:func:`~irscope.whatif.equivalence.compile_differences`)."""
    error: str | None = None
    """One line when the script could not be run or compiled."""

    @property
    def same(self) -> bool:
        return self.error is None and not self.differences


def round_trip(cap: "Capture", script: str, out_bundle: str, python: str | None = None,
               timeout: float = 600.0) -> RoundTrip:
    """Run ``script`` (a reproducer of ``cap``) under ``irscope run`` with no GPU, into
    ``out_bundle``, and compare its capture with ``cap`` up to locations. ``python``:
    the interpreter (its Triton compiles), by default this one."""
    cmd = [sys.executable, "-m", "irscope", "run", script, "-o", out_bundle, "-q", "--no-open",
           "--target", cap.target]
    if python:
        cmd += ["--python", python]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return RoundTrip(out_bundle, None, (), f"irscope run {script} took over {timeout:.0f} s")
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
        return RoundTrip(out_bundle, None, (), f"irscope run {script} failed (exit {p.returncode}): {last}")
    with open_bundle(out_bundle) as got:
        caps = [c for c in got.captures() if c.kernel == cap.kernel]
        if not caps:
            return RoundTrip(out_bundle, None, (), f"{script} compiled no {cap.kernel}")
        again = caps[-1]
        if again.failed:
            return RoundTrip(out_bundle, again.id, (), f"the reproducer's compile failed: {again.error}")
        return RoundTrip(out_bundle, again.id, tuple(compile_differences(cap, again)))
