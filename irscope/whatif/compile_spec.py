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

Where the source comes from: the kernel's stored function, and each helper the
source IR (Triton's IR before inlining: one ``tt.func`` per function called) names,
from the sources stored beside the capture (bundle schema 4+), else from the file on
disk when it still holds the kernel's stored source (the rule of
:mod:`irscope.core.user_functions`). Decorators are not stored: the kernel is written
with a plain ``@triton.jit`` (an autotuner's configs are already resolved into the
constexprs and options), a helper with ``@triton.jit``, or ``@triton.jit(noinline=True)``
when the TTIR kept it as a function of its own. A Triton before 3.3 keeps no source
IR: its helpers are the ``@triton.jit`` functions of the kernel's file it calls,
read from disk. Module-level names the functions read (``SCALE = tl.constexpr(3)``,
``from ... import libdevice as ld``) are not stored: Triton's own modules are
imported by their usual names, the rest copied from the kernel's file when it is on
disk, and named in :attr:`CompileSpec.notes` otherwise.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from irscope.compiler.stages import SOURCE, TTIR
from irscope.core.target import Target
from irscope.core.user_functions import _Sources, source_ir_defs  # the one rule for finding a helper's source
from irscope.errors import IrscopeError
from irscope.store.attachments import attachments
from irscope.store.bundle import LAUNCH

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

# Names a kernel may use without defining them: what Triton's own modules are imported as.
_KNOWN_IMPORTS: dict[str, str] = {
    "tl": "import triton.language as tl",
    "triton": "import triton",
    "libdevice": "from triton.language.extra import libdevice",
    "math": "import math",
    "tlx": "import triton.language.extra as tlx",
}
_SYMBOL_RE = re.compile(r"^(?:[\w.]*\.)?(_*[^\W_][\w]*?)__")


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
    (from its file, when on disk), each helper, then the kernel (decorated
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


def _function_def(text: str, name: str) -> ast.FunctionDef:
    """The ``def name`` of a function's stored source (dedented when it was nested)."""
    lines = text.splitlines()
    indent = min((len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()), default=0)
    body = "\n".join(ln[indent:] for ln in lines)
    try:
        tree = ast.parse(body)
    except SyntaxError as exc:
        raise IrscopeError(f"the stored source of {name} does not parse ({exc.msg}, line {exc.lineno})") from None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            return node
    raise IrscopeError(f"the stored source of {name} holds no function")


def _undecorated(text: str, name: str) -> str:
    """The function's source from its ``def`` to its end, dedented, decorators dropped."""
    lines = text.splitlines()
    indent = min((len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()), default=0)
    lines = [ln[indent:] for ln in lines]
    node = _function_def("\n".join(lines), name)
    return "\n".join(lines[node.lineno - 1:node.end_lineno or len(lines)])


def _noinline(cap: "Capture", kernel: str) -> set[str]:
    """Helpers the TTIR kept as functions of their own (``@triton.jit(noinline=True)``)."""
    if TTIR not in cap.stages:
        return set()
    text = cap.stage(TTIR).text
    out = set()
    for fn_name in re.findall(r"tt\.func\s+(?:\w+\s+)?@([\w.$]+)", text if isinstance(text, str) else ""):
        m = _SYMBOL_RE.match(fn_name)
        name = m.group(1) if m else fn_name
        if name != kernel:
            out.add(name)
    return out


def _is_jit(node: ast.FunctionDef) -> bool:
    return any("jit" in ast.unparse(d) for d in node.decorator_list)


def _helpers_from_file(cap: "Capture") -> list[tuple[str, str]]:
    """A capture with no source IR (Triton before 3.3 keeps none): the ``@triton.jit``
    functions of the kernel's own file that it calls, directly or not, read from the
    file when it still holds the kernel's stored source."""
    got = _Sources(cap).file(cap.file)
    tree = got[1] if got is not None else None
    if got is None or tree is None:
        return []
    lines = got[0]
    jitted = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and _is_jit(n)}
    todo = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == cap.kernel]
    found: dict[str, ast.FunctionDef] = {}
    while todo:
        fn = todo.pop()
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and node.id in jitted and node.id != cap.kernel and node.id not in found:
                found[node.id] = jitted[node.id]
                todo.append(jitted[node.id])
    return [(n.name, "\n".join(lines[n.lineno - 1:n.end_lineno or n.lineno]))
            for n in sorted(found.values(), key=lambda n: n.lineno)]


def _helpers(cap: "Capture") -> tuple[list[tuple[str, str]], list[str]]:
    """(name, source) of each user helper the kernel calls, and notes on those whose
    source neither the bundle nor the disk holds."""
    if SOURCE not in cap.stages:
        return _helpers_from_file(cap), []
    text = cap.stage(SOURCE).text
    defs = source_ir_defs(text) if isinstance(text, str) else []
    sources = _Sources(cap)
    src = cap.source
    out: list[tuple[str, str]] = []
    missing: list[str] = []
    seen: set[str] = set()
    for name, frame in defs:
        if name == cap.kernel and frame.line == src.first_line:
            continue
        if name in seen:
            continue
        seen.add(name)
        span = sources.def_span(frame.file, frame.line, True)
        if span is None:
            missing.append(name)
            continue
        fname, first, last = span
        texts = sources.texts(frame.file, first, last)
        if any(n not in texts for n in range(first, last + 1)):
            missing.append(name)
            continue
        out.append((fname, "\n".join(texts[n] for n in range(first, last + 1))))
    return out, missing


def _free_names(funcs: list[ast.FunctionDef]) -> set[str]:
    """Names the functions load without binding them (module globals they rely on)."""
    defined = {f.name for f in funcs} | set(dir(builtins))
    free: set[str] = set()
    for fn in funcs:
        bound = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                bound.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.Lambda)) and node is not fn:
                args = node.args
                bound |= {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound:
                free.add(node.id)
    return free - defined


def _module_globals(names: set[str], file: tuple[list[str], ast.Module | None] | None,
                    helpers: set[str]) -> tuple[list[str], set[str]]:
    """The top-level imports and assignments of the kernel's file (read from disk)
    that bind ``names``, as source lines, and the names they bind. A helper imported
    under another name (``from .util import helper as h``) becomes ``h = helper``:
    the module defines the helper itself."""
    if file is None or file[1] is None:
        return [], set()
    lines, tree = file[0], file[1]
    out: list[str] = []
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            aliases = [a for a in node.names if a.asname in names and a.name in helpers]
            for a in aliases:
                out.append(f"{a.asname} = {a.name}")
                bound.add(str(a.asname))
            if aliases:
                continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            got = {(a.asname or a.name).split(".")[0] for a in node.names} & names
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            got = {t.id for t in targets if isinstance(t, ast.Name)} & names
        else:
            continue
        if got:
            bound |= got
            out.append("\n".join(lines[node.lineno - 1:node.end_lineno or node.lineno]))
    return out, bound


def _module_source(kernel_text: str, kernel: str, helpers: list[tuple[str, str]], noinline: set[str],
                   file: tuple[list[str], ast.Module | None] | None = None) -> tuple[str, list[str]]:
    """The self-contained module (imports, module globals, helpers, kernel), and notes
    on names it could not define. A global the kernel or a helper reads that is not
    one of Triton's modules comes from the kernel's file on disk (``file``), when
    it is there."""
    parts: list[str] = []
    funcs: list[ast.FunctionDef] = []
    for name, text in helpers:
        body = _undecorated(text, name)
        funcs.append(_function_def(body, name))
        deco = "@triton.jit(noinline=True)" if name in noinline else "@triton.jit"
        parts.append(f"{deco}\n{body}")
    body = _undecorated(kernel_text, kernel)
    funcs.append(_function_def(body, kernel))
    parts.append(f"@triton.jit\n{body}")
    free = _free_names(funcs)
    imports = ["import triton", "import triton.language as tl"]
    imports += sorted(_KNOWN_IMPORTS[n] for n in free if n in _KNOWN_IMPORTS and _KNOWN_IMPORTS[n] not in imports)
    unknown = {n for n in free if n not in _KNOWN_IMPORTS}
    globals_src, bound = _module_globals(unknown, file, {name for name, _ in helpers})
    missing = sorted(unknown - bound)
    notes = [f"the kernel uses module-level names the bundle does not hold: {', '.join(missing)}"] if missing else []
    aliases = [g for g in globals_src if re.fullmatch(r"\w+ = \w+", g)]  # helper aliases: after the helpers
    others = [g for g in globals_src if g not in aliases]
    head = "\n".join(imports) + ("\n\n" + "\n".join(others) if others else "")
    tail = "\n\n" + "\n".join(aliases) if aliases else ""
    return head + "\n\n\n" + "\n\n\n".join(parts) + tail + "\n", notes


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
    constexprs: dict[str, Any] = info.get("constexprs") or {}
    kernel_fn = _function_def(src.text, cap.kernel)
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
        else:
            args.append(ArgSpec(name, str(typ), divisible=_divisible(attrs.get(name))))
    grid, args = _with_launch(cap, args)
    opts = cap.options
    options = {k: opts[k] for k in USER_OPTIONS if opts.get(k) is not None}
    helpers, missing = _helpers(cap)
    source, notes = _module_source(src.text, cap.kernel, helpers, _noinline(cap, cap.kernel), _Sources(cap).file(cap.file))
    if missing:
        notes.append(f"no source for helper(s) {', '.join(missing)} in the bundle or on disk")
    return CompileSpec(kernel=cap.kernel, args=tuple(args), options=options, target=Target.parse(cap.target).name,
                       source=source, file=src.file, first_line=src.first_line, triton_version=cap.triton_version,
                       capture_id=cap.id, variant=cap.variant, helpers=tuple(n for n, _ in helpers),
                       grid=grid, notes=tuple(notes))
