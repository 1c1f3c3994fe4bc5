"""Everything needed to compile a captured kernel again, read from its capture alone.

A :class:`CompileSpec` holds the kernel's Python source (the kernel and every
``@triton.jit`` helper it calls, as one self-contained module), its parameters with
their types and the specialisations Triton made (divisibility by 16, equal to 1),
the constexpr values, the compile options a user sets (num_warps, num_stages,
num_ctas, maxnreg, ...), the target, and the launch (grid, argument shapes and
dtypes, from the capture's ``launch`` attachment) where the capture knows it.
:func:`spec_of` builds one from a capture with no access to the original script;
:meth:`CompileSpec.with_changes` gives the same kernel with other constexprs,
options or target (``irscope tune``'s grid points).

The source is the kernel's stored function and the helpers it calls, with the
module-level names they read, from the bundle (:mod:`irscope.whatif.spec_source`
says where each comes from). An autotuner's configs are already resolved into the
constexprs and options.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from irscope.core.target import Target
from irscope.errors import IrscopeError
from irscope.store.attachments import attachments
from irscope.store.bundle import LAUNCH
from irscope.whatif.spec_source import function_def, kernel_module

if TYPE_CHECKING:
    from irscope.core.capture import Capture

USER_OPTIONS: tuple[str, ...] = (
    "num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid",
    "launch_pdl", "debug", "sanitize_overflow", "default_dot_input_precision", "enable_reflect_ftz", "ptx_version", "ptx_options", "instrumentation_mode", "waves_per_eu",
    "matrix_instr_nonkdim", "kpack", "schedule_hint", "arch_options",
)
"""Options a user can set on a launch (``kernel[grid](..., num_warps=4)``) or pass to
``triton.compile``; the rest of a capture's options (``arch``, ``extern_libs``,
``backend_name``, the supported dtypes, ``max_num_imprecise_acc_default``) follow from
the target and the installation."""

TUNABLE_OPTIONS: tuple[str, ...] = ("num_warps", "num_stages", "num_ctas", "maxnreg")
"""The options a tuning grid may vary besides the constexprs."""



@dataclass(frozen=True)
class ArgSpec:
    """One parameter of the kernel, as Triton specialised it."""

    name: str
    type: str
    """Triton's type: ``*fp16``, ``i32``, ``i64``, ``fp32``, or ``constexpr`` for a
    declared constexpr and for a runtime argument Triton specialised to 1."""
    constexpr: bool = False
    """Declared ``tl.constexpr`` in the kernel's signature."""
    divisible: bool = False
    """Triton hinted it divisible by 16 (``tt.divisibility = 16``; pointers: 16-byte aligned)."""
    equal_to_1: bool = False
    """A runtime argument whose value 1 Triton turned into a constant."""
    runtime_type: str | None = None
    """For an ``equal_to_1`` argument: the type a Triton before 3.3 recorded (``i32``)."""
    value: Any = None
    """The constexpr's value (also the 1 of an ``equal_to_1`` argument), or a number
    passed at the captured launch where the capture knows it; None otherwise."""
    shape: tuple[int, ...] | None = None
    """The tensor's shape at the captured launch, where the capture knows it."""
    dtype: str | None = None
    """The tensor's torch dtype name (``float16``) at the captured launch, where known."""
    stride: tuple[int, ...] | None = None
    """The tensor's strides (in elements) at the captured launch, where known."""
    elements: tuple[Any, ...] | None = None
    """For a tuple parameter: its elements' Triton types, nested as the tuple is
    (``("*fp32", "*fp32")``), the signature Triton takes; ``type`` is their text."""

    @property
    def runtime(self) -> bool:
        """A value passed at launch (not a declared constexpr)."""
        return not self.constexpr

    @property
    def pointer(self) -> bool:
        return self.type.startswith("*")


@dataclass(frozen=True)
class CompileSpec:
    """One captured compile, with everything needed to compile it again (see the module)."""

    kernel: str
    """The kernel's function name."""
    args: tuple[ArgSpec, ...]
    """Every parameter, in order."""
    options: dict[str, Any]
    """The user-set options the capture recorded (:data:`USER_OPTIONS`, None values left out)."""
    target: str
    """Canonical target name: ``sm_90``, ``gfx942``."""
    source: str
    """A self-contained Python module: imports, the module-level names the kernel reads
    (as recorded, else from its file on disk), each helper, then the kernel (decorated
    ``@triton.jit``). Compiling ``kernel`` from it gives the captured IR up to locations."""
    file: str | None = None
    """The original kernel file, as the compile named it."""
    first_line: int | None = None
    triton_version: str | None = None
    capture_id: int | None = None
    variant: str = ""
    helpers: tuple[str, ...] = ()
    """The helpers' names, in the order ``source`` defines them."""
    grid: tuple[int, ...] | None = None
    """The launch grid, where the capture knows it."""
    tuple_constexprs: tuple[tuple[tuple[int, ...], Any], ...] = ()
    """Elements of tuple parameters Triton made constants (an int equal to 1, a
    constexpr in the tuple), by their path: ``((2, 1), 1)`` is element 1 of parameter 2."""
    tuple_divisible: tuple[tuple[int, ...], ...] = ()
    """Elements of tuple parameters hinted divisible by 16, by their path."""
    notes: tuple[str, ...] = field(default=())
    """What the spec could not recover exactly (a missing helper source, unknown shapes)."""

    # -- views of the arguments ----------------------------------------------------
    @property
    def params(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.args)

    @property
    def signature(self) -> dict[str, str]:
        """param -> Triton type (``constexpr`` for constexprs and equal-to-1 arguments)."""
        return {a.name: a.type for a in self.args}

    @property
    def constexprs(self) -> dict[str, Any]:
        """Every constant of the compile: declared constexprs and equal-to-1 arguments."""
        return {a.name: a.value for a in self.args if a.constexpr or a.equal_to_1}

    @property
    def declared_constexprs(self) -> dict[str, Any]:
        """The constexprs the kernel declares (``BLOCK: tl.constexpr``), by name."""
        return {a.name: a.value for a in self.args if a.constexpr}

    @property
    def divisible(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.args if a.divisible)

    @property
    def equal_to_1(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.args if a.equal_to_1)

    def arg(self, name: str) -> ArgSpec:
        """The parameter ``name``; IrscopeError listing the parameters when there is none."""
        for a in self.args:
            if a.name == name:
                return a
        raise IrscopeError(f"{self.kernel} has no parameter {name!r} (it has: {', '.join(self.params)})")

    # -- other compiles of the same kernel -------------------------------------------
    def with_changes(self, constexprs: dict[str, Any] | None = None, options: dict[str, Any] | None = None,
                     target: str | None = None) -> "CompileSpec":
        """The same kernel with some constexprs, options or the target changed. A key that
        is neither a declared constexpr nor one of :data:`USER_OPTIONS` is a one-line error."""
        constexprs, options = dict(constexprs or {}), dict(options or {})
        declared = self.declared_constexprs
        bad = [k for k in constexprs if k not in declared]
        if bad:
            raise IrscopeError(f"{self.kernel} has no constexpr {', '.join(bad)} "
                               f"(constexprs: {', '.join(declared) or 'none'})")
        bad = [k for k in options if k not in USER_OPTIONS]
        if bad:
            raise IrscopeError(f"unknown compile option {', '.join(bad)} (options: {', '.join(USER_OPTIONS)})")
        args = tuple(replace(a, value=constexprs[a.name]) if a.name in constexprs else a for a in self.args)
        merged = {k: v for k, v in {**self.options, **options}.items() if v is not None}
        return replace(self, args=args, options=merged,
                       target=Target.parse(target).name if target is not None else self.target)

    @property
    def launch_known(self) -> bool:
        """Whether the capture recorded its launch (the grid, or argument shapes)."""
        return self.grid is not None or any(a.shape is not None for a in self.args)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able form (stamps, ``--json`` outputs)."""
        return {"kernel": self.kernel, "target": self.target, "capture_id": self.capture_id,
                "variant": self.variant, "signature": self.signature, "constexprs": self.constexprs,
                "divisible": list(self.divisible), "equal_to_1": list(self.equal_to_1),
                "options": dict(self.options), "grid": list(self.grid) if self.grid else None,
                "helpers": list(self.helpers), "file": self.file, "triton_version": self.triton_version,
                "notes": list(self.notes)}


# -- reading a capture ------------------------------------------------------------------

def _divisible(attr: Any) -> bool:
    """Whether one parameter's captured attributes say divisible by 16. Triton 3.3+:
    ``[["tt.divisibility", 16]]``; 3.0-3.2 (irscope keys AttrsDescriptor by property):
    ``[["tt.divisibility", 16]]`` too, or the older ``divisible_by_16`` property."""
    if not isinstance(attr, list):
        return False
    for item in attr:
        if isinstance(item, list) and item and item[0] in ("tt.divisibility", "divisible_by_16", "divisibility_16"):
            return True
    return False


_CONSTEXPR_REPR = re.compile(r"^constexpr\[(.*)\]$")
_FUNCTION_REPR = re.compile(r"^JITFunction\(([\w.]*):([\w.<>]+)\)$")


class FunctionRef(str):
    """A ``@triton.jit`` function passed as a constexpr (``kernel[grid](x, ACT=relu)``),
    as the capture holds it: Triton's repr, ``JITFunction(module:qualname)``. It stays
    that text everywhere a string is read (JSON, variant labels); a reproducer passes
    the function it names, which its module defines (:attr:`name`)."""

    @property
    def name(self) -> str:
        """The function's name (the last part of its qualname)."""
        m = _FUNCTION_REPR.match(self)
        return m.group(2).split(".")[-1] if m else str(self)


def _unwrapped(value: Any) -> Any:
    """A constexpr value as captured; a ``tl.constexpr`` object passed as one (a default
    ``BLOCK: tl.constexpr = GLOBAL``), which captures before irscope unwrapped it hold
    as its text ``constexpr[64]``, becomes its literal value where it has one; a
    function passed as one (``JITFunction(__main__:relu)``) a :class:`FunctionRef`."""
    if isinstance(value, str) and _FUNCTION_REPR.match(value):
        return FunctionRef(value)
    m = _CONSTEXPR_REPR.match(value) if isinstance(value, str) else None
    if m is None:
        return value
    try:
        return ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError):
        return value


def _nested_tuple(value: Any) -> tuple[Any, ...]:
    """A captured tuple type (JSON lists) as the nested tuple Triton's signature takes."""
    return tuple(_nested_tuple(v) if isinstance(v, (list, tuple)) else str(v) for v in value)


def _tuple_text(elements: tuple[Any, ...]) -> str:
    """``("*fp32", ("i32", "fp32"))`` -> ``(*fp32, (i32, fp32))``."""
    return "(" + ", ".join(_tuple_text(e) if isinstance(e, tuple) else e for e in elements) + ")"


_PATH = re.compile(r"^\(\s*\d+\s*(,\s*\d+\s*)*,?\s*\)$")


def _path(key: Any) -> tuple[int, ...] | None:
    """The path a captured constexpr or attribute key names inside a tuple parameter
    (the hook writes Triton's ``(2, 1)`` as the text ``"(2, 1)"``); None for a name."""
    if isinstance(key, str) and _PATH.match(key):
        return tuple(int(x) for x in key.strip("()").split(",") if x.strip())
    return None


def _equal_to_1_attr(attr: Any) -> bool:
    """Triton 3.1-3.2 marked equal-to-1 arguments with an attribute (``tt.equal_to``)."""
    return isinstance(attr, list) and any(isinstance(i, list) and i and i[0] in ("tt.equal_to", "equal_to_1")
                                          for i in attr)


_ATTRS_REPR = re.compile(r"(divisible_by_16|equal_to_1)=\(([\d,\s]*)\)")


def _attrs_by_name(attrs: Any, params: list[str]) -> dict[str, Any]:
    """The captured attributes by parameter name. Triton 3.0's descriptor is stored as
    its repr, ``AttrsDescriptor(divisible_by_16=(0, 1), equal_to_1=(7,))``, indices over
    every parameter."""
    if isinstance(attrs, dict):
        return attrs
    out: dict[str, Any] = {}
    if isinstance(attrs, str):
        for prop, ids in _ATTRS_REPR.findall(attrs):
            name = "tt.divisibility" if prop == "divisible_by_16" else "tt.equal_to"
            value = 16 if prop == "divisible_by_16" else 1
            for i in (int(x) for x in ids.replace(",", " ").split()):
                if 0 <= i < len(params):
                    out.setdefault(params[i], []).append([name, value])
    return out


def _declared_constexprs(fn: ast.FunctionDef) -> set[str]:
    """The parameters annotated ``tl.constexpr`` / ``constexpr`` (any module prefix)."""
    out = set()
    for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
        ann = a.annotation
        text = ast.unparse(ann) if ann is not None else ""
        if text.split(".")[-1] == "constexpr" or text.strip("'\"").split(".")[-1] == "constexpr":
            out.add(a.arg)
    return out


def _with_launch(cap: "Capture", args: list[ArgSpec]) -> tuple[tuple[int, ...] | None, list[ArgSpec]]:
    """The grid, and the arguments with their launch shapes and values, from the
    capture's ``launch`` record (captures made by a launch, irscope 6+); the arguments
    unchanged where there is none."""
    rows = attachments(cap._store(), LAUNCH, cap.id)
    data = rows[0].data if rows and isinstance(rows[0].data, dict) else None
    if data is None:
        return None, args
    grid_data = data.get("grid")
    grid = tuple(int(g) for g in grid_data) if isinstance(grid_data, list) and grid_data else None
    got_args = data.get("args")
    launch: dict[str, Any] = got_args if isinstance(got_args, dict) else {}
    out = []
    for a in args:
        got = launch.get(a.name)
        if not isinstance(got, dict) or a.constexpr or a.equal_to_1:
            out.append(a)
        elif a.pointer and isinstance(got.get("shape"), list):
            out.append(replace(a, shape=tuple(int(d) for d in got["shape"]), dtype=str(got.get("dtype") or "") or None,
                               stride=tuple(int(d) for d in got["stride"]) if isinstance(got.get("stride"), list)
                               else None))
        elif not a.pointer and isinstance(got.get("value"), (int, float)):
            out.append(replace(a, value=got["value"]))
        else:
            out.append(a)
    return grid, out


def spec_of(cap: "Capture") -> CompileSpec:
    """Everything needed to compile ``cap`` again, from the bundle alone (see the module).
    IrscopeError (one line) when the capture has no kernel source or no signature."""
    info = cap.info
    src = cap.source
    if not src.text:
        raise IrscopeError(f"capture #{cap.id} ({cap.kernel}) holds no kernel source: it cannot be compiled again")
    signature: dict[str, Any] = info.get("signature") or {}
    if not isinstance(signature, dict) or not signature:
        raise IrscopeError(f"capture #{cap.id} ({cap.kernel}) holds no signature: it cannot be compiled again")
    constexprs: dict[str, Any] = {k: _unwrapped(v) for k, v in (info.get("constexprs") or {}).items()}
    kernel_fn = function_def(src.text, cap.kernel)
    declared = _declared_constexprs(kernel_fn)
    params = [a.arg for a in kernel_fn.args.posonlyargs + kernel_fn.args.args]
    attrs = _attrs_by_name(info.get("attrs") or {}, params)
    args: list[ArgSpec] = []
    for name in params:
        typ = signature.get(name)
        if name in declared:
            args.append(ArgSpec(name, "constexpr", constexpr=True, value=constexprs.get(name)))
        elif name in constexprs or typ == "constexpr" or _equal_to_1_attr(attrs.get(name)):
            # A runtime argument Triton specialised on its value 1.
            args.append(ArgSpec(name, "constexpr", equal_to_1=True, value=constexprs.get(name, 1),
                                runtime_type=None if typ in (None, "constexpr") else str(typ)))
        elif typ is None:
            raise IrscopeError(f"capture #{cap.id}: parameter {name} of {cap.kernel} has no captured type")
        elif isinstance(typ, (list, tuple)):
            elements = _nested_tuple(typ)
            args.append(ArgSpec(name, _tuple_text(elements), elements=elements))
        else:
            args.append(ArgSpec(name, str(typ), divisible=_divisible(attrs.get(name))))
    grid, args = _with_launch(cap, args)
    opts = cap.options
    options = {k: opts[k] for k in USER_OPTIONS if opts.get(k) is not None}
    source, helpers, notes = kernel_module(cap)
    notes += [f"{k} is the function {v.name}, whose source the bundle does not hold" for k, v in constexprs.items()
              if isinstance(v, FunctionRef) and v.name not in helpers]
    return CompileSpec(kernel=cap.kernel, args=tuple(args), options=options, target=Target.parse(cap.target).name,
                       source=source, file=src.file, first_line=src.first_line, triton_version=cap.triton_version,
                       capture_id=cap.id, variant=cap.variant, helpers=helpers,
                       grid=grid, notes=tuple(notes),
                       tuple_constexprs=tuple(sorted((p, v) for k, v in constexprs.items()
                                                     if (p := _path(k)) is not None and len(p) > 1)),
                       tuple_divisible=tuple(sorted(p for k, v in attrs.items()
                                                    if (p := _path(k)) is not None and len(p) > 1 and _divisible(v))))
