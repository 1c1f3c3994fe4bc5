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
and named in a note otherwise. Where two modules the kernel reaches define one name
differently (two helpers called ``leaky``), each such module's helpers and names are
defined in a scope of their own (:mod:`irscope.whatif.spec_scopes`).
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
from irscope.whatif.spec_scopes import KERNEL_MODULE, SCOPES, Scoped, module_lines, ref_of, scoped_modules

if TYPE_CHECKING:
    from irscope.core.capture import Capture

CONFLICTS = "#conflicts"  # the key capture/child/irscope_child_globals.py lists clashing names under

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


_TTIR_FUNC = re.compile(r'tt\.func\s+(?:\w+\s+)?@(?:"([^"]+)"|([\w.$]+))')


def _noinline(cap: "Capture", kernel: str) -> dict[str, str]:
    """Helpers the TTIR kept as functions of their own (``@triton.jit(noinline=True)``):
    name -> the module and qualname prefix their symbol carries (``__main__``,
    ``mylib.ops``; Triton mangles it into the symbol, ``@"mylib.ops._scale__fp32__"``,
    so a reproducer that defines the helper in ``__main__`` sets it back)."""
    if TTIR not in cap.stages:
        return {}
    text = cap.stage(TTIR).text
    out: dict[str, str] = {}
    for quoted, plain in _TTIR_FUNC.findall(text if isinstance(text, str) else ""):
        fn_name = quoted or plain
        m = _SYMBOL_RE.match(fn_name)
        name = m.group(1) if m else fn_name
        if name != kernel:
            i = fn_name.find(f".{name}__")
            out.setdefault(name, fn_name[:i] if i > 0 else "")
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


def _helpers(cap: "Capture", clashes: set[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """(name, source) of each user helper the kernel calls, and the names of those
    whose source neither the bundle nor the disk holds; a name two different helpers
    share is added to ``clashes`` (the first is kept)."""
    if SOURCE not in cap.stages:
        return _helpers_from_file(cap), []
    text = cap.stage(SOURCE).text
    defs = source_ir_defs(text) if isinstance(text, str) else []
    sources = _Sources(cap)
    src = cap.source
    out: list[tuple[str, str]] = []
    missing: list[str] = []
    seen: dict[str, tuple[str, int]] = {}
    for name, frame in defs:
        if name == cap.kernel and frame.line == src.first_line:
            continue
        if name in seen:
            if seen[name] != (frame.file, frame.line):  # another function of the same name
                clashes.add(name)
            continue
        seen[name] = (frame.file, frame.line)
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


def _recorded_globals(names: set[str], recorded: dict[str, Any], helpers: set[str],
                      refs: dict[tuple[str, str], str] | None = None) -> tuple[list[str], list[str], set[str]]:
    """The lines that define ``names`` from the values the capture recorded (the
    ``globals`` attachment: see ``capture/child/irscope_child_globals.py``): those that
    go before the functions (an import, ``NAME = expression``), those that go after
    them (``alias = helper`` for a helper bound under another name; a module of the
    user's own built with what the kernel reads off it), and the names they bind. A
    value recorded only by its repr, or a module whose helpers are not all here, binds
    nothing. ``refs``: how the script names the helpers it defines in a module's scope
    (:mod:`irscope.whatif.spec_scopes`)."""
    refs = refs or {}
    head: list[str] = []
    tail: list[str] = []
    bound: set[str] = set()
    for name in sorted(names):
        got = recorded.get(name)
        if not isinstance(got, dict):
            continue
        ref = ref_of({**got, "name": name}, refs)
        if isinstance(got.get("import"), str):
            head.append(got["import"])
        elif isinstance(got.get("expr"), str):
            head.append(f"{name} = {got['expr']}")
        elif ref is not None:
            tail.append(f"{name} = {ref}")
        elif got.get("alias") in helpers:
            tail.append(f"{name} = {got['alias']}")
        elif isinstance(got.get("attrs"), dict):
            lines = _user_module_lines(name, str(got.get("module") or name), got["attrs"], helpers, refs)
            if lines is None:
                continue
            tail += lines
        else:
            continue
        bound.add(name)
    return head, tail, bound


def _user_module_lines(name: str, module: str, attrs: dict[str, Any], helpers: set[str],
                       refs: dict[tuple[str, str], str] | None = None) -> list[str] | None:
    """A user module the kernel reads off, rebuilt by :func:`module_lines`; None when an
    attribute it reads (a helper among ``helpers``...) cannot be rebuilt."""
    return module_lines(name, module, attrs, refs or {}, helpers, strict=True)


def _module_jits(recorded: dict[str, Any], names: set[str]) -> dict[str, dict[str, Any]]:
    """The ``@triton.jit`` functions the modules among ``names`` hold (``pkg.sub.helper``,
    nested as recorded), by their own names, with their recorded sources: a capture
    with no source IR (Triton before 3.3) finds them nowhere else."""
    out: dict[str, dict[str, Any]] = {}
    todo = [recorded[n] for n in names if isinstance(recorded.get(n), dict)]
    while todo:
        got = todo.pop()
        attrs = got.get("attrs")
        for value in attrs.values() if isinstance(attrs, dict) else ():
            if not isinstance(value, dict):
                continue
            if isinstance(value.get("alias"), str) and isinstance(value.get("jit"), str):
                out.setdefault(value["alias"], value)
            elif isinstance(value.get("attrs"), dict):
                todo.append(value)
    return out


def _module_source(kernel_text: str, kernel: str, helpers: list[tuple[str, str]], noinline: dict[str, str],
                   file: tuple[list[str], ast.Module | None] | None = None,
                   recorded: dict[str, Any] | None = None,
                   scoped: Scoped | None = None) -> tuple[str, list[str]]:
    """The self-contained module (imports, module globals, helpers, kernel), and notes
    on names it could not define. A global the kernel or a helper reads that is not
    one of Triton's modules is defined from the value the capture recorded
    (``recorded``: its ``globals`` attachment), else copied from the kernel's file on
    disk (``file``), when it is there; a ``@triton.jit`` function it names but never
    called in this compile, from its recorded source. ``noinline``: the helpers kept
    as functions, with the module their symbol names (see :func:`_noinline`).
    ``scoped``: the modules whose helpers are defined in scopes of their own, where
    names clash (:mod:`irscope.whatif.spec_scopes`)."""
    prefixes = dict(noinline)
    parts: list[str] = []
    funcs: list[ast.FunctionDef] = []
    recorded = recorded or {}
    refs = scoped.refs if scoped is not None else {}
    helpers = [(n, text) for n, text in helpers if scoped is None or n not in scoped.functions]
    helper_names = {name for name, _ in helpers}
    while True:
        # A @triton.jit function the compile never called (a branch a constexpr pruned)
        # is not among the helpers; its recorded source defines it, then what it reads.
        funcs = [function_def(_undecorated(text, name), name) for name, text in helpers]
        funcs.append(function_def(_undecorated(kernel_text, kernel), kernel))
        free = _free_names(funcs)
        jits = {str(g.get("alias") or n): g for n in free
                if isinstance(g := recorded.get(n), dict) and isinstance(g.get("jit"), str)
                and ref_of({**g, "name": n}, refs) is None}
        jits.update({n: g for n, g in _module_jits(recorded, free).items()
                     if n not in jits and ref_of(g, refs) is None})
        uncalled = [(n, jits[n]["jit"]) for n in sorted(set(jits) - helper_names)]
        if not uncalled:
            break
        helpers += uncalled
        helper_names |= {n for n, _ in uncalled}
        noinline = {**{n: "" for n, _ in uncalled if jits[n].get("noinline")}, **noinline}
    for name, text in helpers:
        deco = "@triton.jit(noinline=True)" if name in noinline else "@triton.jit"
        part = f"{deco}\n{_undecorated(text, name)}"
        where = prefixes.get(name)
        if where and where != "__main__":  # the symbol names the helper's own module
            part += f"\n\n\n{name}.__module__, {name}.__qualname__ = {where!r}, {name!r}"
        parts.append(part)
    parts.append(f"@triton.jit\n{_undecorated(kernel_text, kernel)}")
    imports = ["import triton", "import triton.language as tl"]
    imports += sorted(_KNOWN_IMPORTS[n] for n in free if n in _KNOWN_IMPORTS and _KNOWN_IMPORTS[n] not in imports)
    unknown = {n for n in free if n not in _KNOWN_IMPORTS}
    head_lines, tail_lines, bound = _recorded_globals(unknown, recorded, helper_names, refs)
    if scoped is not None:
        parts.append(scoped.text)
    from_file, bound_file = _module_globals(unknown - bound, file, helper_names)
    missing = sorted(unknown - bound - bound_file)
    notes = [f"the kernel uses module-level names the bundle does not hold: {', '.join(missing)}"] if missing else []
    # helper aliases (``tw = twice``) and user modules go after the helpers they name
    tail_lines += [g for g in from_file if re.fullmatch(r"(\w+) = (\w+)", g) and g.split(" = ")[1] in helper_names]
    others = sorted(head_lines + [g for g in from_file if g not in tail_lines],
                    key=lambda g: not g.startswith(("import ", "from ")))
    scope_text = scoped.text if scoped is not None else ""
    if any(".ModuleType(" in g for g in tail_lines) or ".ModuleType(" in scope_text:
        imports.append("import types")
    if any("importlib.import_module(" in g for g in tail_lines + [scope_text]):
        imports.append("import importlib")
    head = "\n".join(imports) + ("\n\n" + "\n".join(others) if others else "")
    tail = "\n\n" + "\n".join(tail_lines) if tail_lines else ""
    return head + "\n\n\n" + "\n\n\n".join(parts) + tail + "\n", notes


def _globals_of(cap: "Capture") -> dict[str, Any] | None:
    """The module-level names the capture's kernel read, as recorded at compile time
    (the ``globals`` attachment); None for a capture made before irscope recorded them."""
    rows = attachments(cap._store(), GLOBALS, cap.id)
    data = rows[0].data if rows else None
    return data if isinstance(data, dict) else None


def _version(text: str | None) -> tuple[int, ...]:
    """``"3.6.0"`` -> (3, 6); () when unknown."""
    return tuple(int(x) for x in re.findall(r"\d+", text or "")[:2])


def _kernel_module_first(recorded: dict[str, Any], helpers: list[tuple[str, str]], scoped: Scoped,
                         clashes: set[str]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """Where names clash, the module level holds what the modules left there bind:
    their values of a clashing name, and their source of a clashing helper (the first
    met may have been a scoped module's)."""
    scopes = recorded.get(SCOPES) or {}
    kept = [m for m in scopes if m not in scoped.modules and isinstance(scopes[m], dict)]
    kept.sort(key=lambda m: m != recorded.get(KERNEL_MODULE))  # the kernel's module first
    names: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for m in kept:
        for n, e in (scopes[m].get("names") or {}).items():
            if n in clashes:
                names.setdefault(n, e)
        for n, f in (scopes[m].get("functions") or {}).items():
            if n in clashes and isinstance(f, dict) and isinstance(f.get("jit"), str):
                sources.setdefault(n, f["jit"])
    return {**recorded, **names}, [(n, sources.get(n, text)) for n, text in helpers]


def kernel_module(cap: "Capture") -> tuple[str, tuple[str, ...], list[str]]:
    """(the self-contained module, the helpers' names in the order it defines them,
    notes on what it could not define) for the kernel of ``cap``."""
    src = cap.source
    recorded = _globals_of(cap)
    clashes = set(recorded.get(CONFLICTS) or ()) if recorded else set()
    helpers, missing = _helpers(cap, clashes)
    # A helper's closure is read as its globals from Triton 3.6 on (3.2 reads none), the
    # versions scoped modules were checked with.
    scoped = scoped_modules(recorded, clashes) if recorded and _version(cap.triton_version) >= (3, 6) else None
    if scoped is not None:
        recorded, helpers = _kernel_module_first(recorded or {}, helpers, scoped, clashes)
        missing = [n for n in missing if n not in scoped.functions]
    source, notes = _module_source(src.text or "", cap.kernel, helpers, _noinline(cap, cap.kernel),
                                   _Sources(cap).file(cap.file), recorded, scoped)
    if missing:
        notes.append(f"no source for helper(s) {', '.join(missing)} in the bundle or on disk")
    if clashes and scoped is None:
        notes.append(f"two modules the kernel reaches define {', '.join(sorted(clashes))} differently; one "
                     "script module holds only the first: its compile may differ (repro --check tells)")
    return source, tuple(n for n, _ in helpers), notes
