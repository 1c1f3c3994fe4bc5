"""The self-contained Python module a :class:`~irscope.whatif.compile_spec.CompileSpec`
compiles from: imports, the module-level names the kernel and its helpers read, each
``@triton.jit`` helper the kernel calls, then the kernel, all from the bundle.

Helpers come from the source IR (Triton's IR before inlining: one ``tt.func`` per
function called), their text from the sources stored beside the capture (bundle
schema 4+), else from the file on disk when it still holds the kernel's stored source
(the rule of :mod:`irscope.core.user_functions`); a Triton before 3.3 keeps no source
IR: its helpers are the ``@triton.jit`` functions of the kernel's file it calls, read
from disk. Decorators are not stored: the kernel is written with a plain
``@triton.jit``, a helper with ``@triton.jit``, or ``@triton.jit(noinline=True)`` when
the TTIR kept it as a function of its own.

Module-level names: Triton's own modules are imported by their usual names; the rest
are defined from the values the capture recorded at compile time (its ``globals``
attachment, written by ``capture/child/irscope_child_globals.py``), else, for a
capture older than that record, copied from the kernel's file when it is on disk,
and named in a note otherwise.
"""

from __future__ import annotations

import ast
import builtins
import re
from typing import TYPE_CHECKING, Any

from irscope.compiler.stages import SOURCE, TTIR
from irscope.core.user_functions import _Sources, source_ir_defs  # the one rule for finding a helper's source
from irscope.errors import IrscopeError
from irscope.store.attachments import attachments
from irscope.store.bundle import GLOBALS

if TYPE_CHECKING:
    from irscope.core.capture import Capture

# Names a kernel may use without defining them: what Triton's own modules are imported as.
_KNOWN_IMPORTS: dict[str, str] = {
    "tl": "import triton.language as tl",
    "triton": "import triton",
    "libdevice": "from triton.language.extra import libdevice",
    "math": "import math",
    "tlx": "import triton.language.extra as tlx",
}
_SYMBOL_RE = re.compile(r"^(?:[\w.]*\.)?(_*[^\W_][\w]*?)__")


def function_def(text: str, name: str) -> ast.FunctionDef:
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
    node = function_def("\n".join(lines), name)
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


def _recorded_globals(names: set[str], recorded: dict[str, Any],
                      helpers: set[str]) -> tuple[list[str], list[str], set[str]]:
    """The lines that define ``names`` from the values the capture recorded (the
    ``globals`` attachment: see ``capture/child/irscope_child_globals.py``): those that
    go before the functions (an import, ``NAME = expression``), those that go after
    them (``alias = helper`` for a helper bound under another name; a module of the
    user's own built with what the kernel reads off it), and the names they bind. A
    value recorded only by its repr, or a module whose helpers are not all here, binds
    nothing."""
    head: list[str] = []
    tail: list[str] = []
    bound: set[str] = set()
    for name in sorted(names):
        got = recorded.get(name)
        if not isinstance(got, dict):
            continue
        if isinstance(got.get("import"), str):
            head.append(got["import"])
        elif isinstance(got.get("expr"), str):
            head.append(f"{name} = {got['expr']}")
        elif got.get("alias") in helpers:
            tail.append(f"{name} = {got['alias']}")
        elif isinstance(got.get("attrs"), dict):
            lines = _user_module_lines(name, str(got.get("module") or name), got["attrs"], helpers)
            if lines is None:
                continue
            tail += lines
        else:
            continue
        bound.add(name)
    return head, tail, bound


def _user_module_lines(name: str, module: str, attrs: dict[str, Any], helpers: set[str]) -> list[str] | None:
    """``name = types.ModuleType(module)`` and one assignment per attribute the kernel
    reads off it (a helper, a value); None when a helper it names is not defined."""
    lines = [f"{name} = types.ModuleType({module!r})"]
    for attr, got in sorted(attrs.items()):
        if not isinstance(got, dict):
            return None
        if isinstance(got.get("expr"), str):
            lines.append(f"{name}.{attr} = {got['expr']}")
        elif got.get("alias") in helpers:
            lines.append(f"{name}.{attr} = {got['alias']}")
        else:
            return None
    return lines


def _module_source(kernel_text: str, kernel: str, helpers: list[tuple[str, str]], noinline: set[str],
                   file: tuple[list[str], ast.Module | None] | None = None,
                   recorded: dict[str, Any] | None = None) -> tuple[str, list[str]]:
    """The self-contained module (imports, module globals, helpers, kernel), and notes
    on names it could not define. A global the kernel or a helper reads that is not
    one of Triton's modules is defined from the value the capture recorded
    (``recorded``: its ``globals`` attachment), else copied from the kernel's file on
    disk (``file``), when it is there; a ``@triton.jit`` function it names but never
    called in this compile, from its recorded source."""
    parts: list[str] = []
    funcs: list[ast.FunctionDef] = []
    recorded = recorded or {}
    helpers = list(helpers)
    helper_names = {name for name, _ in helpers}
    while True:
        # A @triton.jit function the compile never called (a branch a constexpr pruned)
        # is not among the helpers; its recorded source defines it, then what it reads.
        funcs = [function_def(_undecorated(text, name), name) for name, text in helpers]
        funcs.append(function_def(_undecorated(kernel_text, kernel), kernel))
        free = _free_names(funcs)
        uncalled = [(n, recorded[n]["jit"]) for n in sorted(free - helper_names)
                    if isinstance(recorded.get(n), dict) and isinstance(recorded[n].get("jit"), str)]
        if not uncalled:
            break
        helpers += uncalled
        helper_names |= {n for n, _ in uncalled}
        noinline = noinline | {n for n, _ in uncalled if recorded[n].get("noinline")}
    for name, text in helpers:
        deco = "@triton.jit(noinline=True)" if name in noinline else "@triton.jit"
        parts.append(f"{deco}\n{_undecorated(text, name)}")
    parts.append(f"@triton.jit\n{_undecorated(kernel_text, kernel)}")
    imports = ["import triton", "import triton.language as tl"]
    imports += sorted(_KNOWN_IMPORTS[n] for n in free if n in _KNOWN_IMPORTS and _KNOWN_IMPORTS[n] not in imports)
    unknown = {n for n in free if n not in _KNOWN_IMPORTS}
    head_lines, tail_lines, bound = _recorded_globals(unknown, recorded, helper_names)
    from_file, bound_file = _module_globals(unknown - bound, file, helper_names)
    missing = sorted(unknown - bound - bound_file)
    notes = [f"the kernel uses module-level names the bundle does not hold: {', '.join(missing)}"] if missing else []
    # helper aliases (``tw = twice``) and user modules go after the helpers they name
    tail_lines += [g for g in from_file if re.fullmatch(r"(\w+) = (\w+)", g) and g.split(" = ")[1] in helper_names]
    others = sorted(head_lines + [g for g in from_file if g not in tail_lines],
                    key=lambda g: not g.startswith(("import ", "from ")))
    if any(".ModuleType(" in g for g in tail_lines):
        imports.append("import types")
    head = "\n".join(imports) + ("\n\n" + "\n".join(others) if others else "")
    tail = "\n\n" + "\n".join(tail_lines) if tail_lines else ""
    return head + "\n\n\n" + "\n\n\n".join(parts) + tail + "\n", notes


def _globals_of(cap: "Capture") -> dict[str, Any] | None:
    """The module-level names the capture's kernel read, as recorded at compile time
    (the ``globals`` attachment); None for a capture made before irscope recorded them."""
    rows = attachments(cap._store(), GLOBALS, cap.id)
    data = rows[0].data if rows else None
    return data if isinstance(data, dict) else None


def kernel_module(cap: "Capture") -> tuple[str, tuple[str, ...], list[str]]:
    """(the self-contained module, the helpers' names in the order it defines them,
    notes on what it could not define) for the kernel of ``cap``."""
    src = cap.source
    helpers, missing = _helpers(cap)
    source, notes = _module_source(src.text or "", cap.kernel, helpers, _noinline(cap, cap.kernel),
                                   _Sources(cap).file(cap.file), _globals_of(cap))
    if missing:
        notes.append(f"no source for helper(s) {', '.join(missing)} in the bundle or on disk")
    return source, tuple(n for n, _ in helpers), notes
