"""The user's functions whose ops a capture holds: the kernel, then each ``@triton.jit``
helper it calls, with their source lines and op counts per stage per line.

Two ways to charge a helper's ops, one walk for both (:data:`CHARGES`):

- :data:`OWN` (the default): an op belongs to the line of its innermost user frame,
  the rule of :mod:`irscope.ir.python_lines`, so a helper's ops sit on the helper's lines;
- :data:`CALL_LINE`: an op inlined from a helper belongs to the kernel line that calls
  the helper (the outermost user frame of its inlined-at chain, so a nested helper
  charges to the outermost call in the kernel). A stage whose locations carry no chain
  (SASS: the innermost line only) charges to the helper's call line when the kernel calls
  it from one line, and leaves the op on the helper's line otherwise.

Library code (``triton/language/*.py`` and anything else in the Triton package) is never
a user function: a frame there is skipped, so ``tl.sum``'s ops go to the user line that
called it, as every other view has them.

Where a helper's source comes from: the capture's stored sources (the kernel's
function, and the helpers stored beside it: :mod:`irscope.capture.helper_sources`), else
the file on disk when the kernel's stored source still matches it there (a bundle of
schema 3 or older stores no helper). A function whose source is found in neither keeps
its name, def line and counts, with empty line texts.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from irscope.compiler.stages import LOWERING, SOURCE, TTIR
from irscope.errors import IrscopeError
from irscope.ir import Op, parse_as
from irscope.ir.model import Frame, Location
from irscope.ir.python_lines import same_file
from irscope.ir.statements import StatementMap, parse_python, statement_map

if TYPE_CHECKING:
    from irscope.core.capture import Capture

OWN = "own"
"""A helper's ops belong to the helper's lines."""
CALL_LINE = "call-line"
"""A helper's ops belong to the kernel line that calls it."""
CHARGES: tuple[str, ...] = (OWN, CALL_LINE)

# Triton installs hold more than triton/language (runtime, compiler, experimental):
# none of it is the user's code.
_PACKAGE_DIRS = ("/site-packages/triton/", "/dist-packages/triton/")
# A helper's symbol in the source stage: ``__main__._gelu__fp32S32_128S__`` (module, name,
# then the mangled signature after a double underscore).
_SYMBOL_RE = re.compile(r"^(?:[\w.]*\.)?(_*[^\W_][\w]*?)__")

Key = tuple[int, int]
"""(function index, statement first line): where an op is charged."""



def read_source_file(path: str, cwd: str | None) -> str | None:
    """The text of a Python file named in a capture: ``path`` as written, else relative
    to the run's folder ``cwd``; None when neither reads as UTF-8."""
    for p in (path, os.path.join(cwd, path) if cwd and not os.path.isabs(path) else None):
        if not p:
            continue
        try:
            with open(p, encoding="utf-8") as fh:
                return fh.read()
        except (OSError, UnicodeDecodeError):
            continue
    return None

def is_library(frame: Frame) -> bool:
    """Whether ``frame`` lies in Triton's own code (never a user function)."""
    if frame.is_library():
        return True
    path = frame.file.replace("\\", "/")
    return any(d in path for d in _PACKAGE_DIRS)


@dataclass(frozen=True, slots=True)
class FunctionLine:
    """One source line of a user function."""

    line: int
    """Line number in the function's file."""
    text: str
    """The line's text ('' when the source was not found)."""
    statement: int
    """The first line of the statement that owns it (where its ops are counted)."""
    counts: dict[str, int] = field(default_factory=dict)
    """Stage -> ops charged to this line (only on a statement's first line)."""

    def to_json(self) -> dict:
        return {"line": self.line, "text": self.text, "statement": self.statement, "counts": dict(self.counts)}


@dataclass(frozen=True, slots=True)
class UserFunction:
    """The kernel or one ``@triton.jit`` helper, as the Python pane shows it."""

    index: int
    """Its place in :attr:`UserFunctions.functions` (the kernel is 0)."""
    name: str
    file: str | None
    first_line: int
    """The ``def`` line."""
    last_line: int
    kernel: bool
    """True for the kernel itself, False for a helper."""
    lines: tuple[FunctionLine, ...]
    """Every line from ``first_line`` to ``last_line``."""
    call_lines: tuple[int, ...] = ()
    """For a helper: the kernel lines (statement first lines) whose call reaches it."""
    has_source: bool = True
    """False when neither the capture nor the disk had its source."""

    def count(self, line: int, stage: str) -> int:
        """Ops of ``stage`` charged to ``line`` (0 off a statement's first line)."""
        for ln in self.lines:
            if ln.line == line:
                return ln.counts.get(stage, 0)
        return 0

    def total(self, stage: str) -> int:
        """Ops of ``stage`` charged to any of its lines."""
        return sum(ln.counts.get(stage, 0) for ln in self.lines)

    def heading(self) -> str:
        """``_gelu  sample_kernels/k.py:26-29``, how sections are titled."""
        return f"{self.name}  {self.file or '?'}:{self.first_line}-{self.last_line}"

    def to_json(self) -> dict:
        return {"name": self.name, "file": self.file, "first_line": self.first_line, "last_line": self.last_line,
                "kernel": self.kernel, "call_lines": list(self.call_lines), "has_source": self.has_source,
                "lines": [ln.to_json() for ln in self.lines]}


@dataclass(frozen=True, slots=True)
class UserFunctions:
    """The user functions of one capture under one charge mode."""

    charge: str
    """:data:`OWN` or :data:`CALL_LINE`."""
    stages: tuple[str, ...]
    """The stages counted, in pipeline order."""
    functions: tuple[UserFunction, ...]
    """The kernel first, then each helper (the kernel's file first, then by file and line)."""

    @property
    def kernel(self) -> UserFunction:
        return self.functions[0]

    @property
    def helpers(self) -> tuple[UserFunction, ...]:
        return self.functions[1:]

    def total(self, stage: str) -> int:
        """Ops of ``stage`` charged to any user line (the same in both modes)."""
        return sum(f.total(stage) for f in self.functions)

    def to_json(self) -> dict:
        return {"charge": self.charge, "stages": list(self.stages),
                "functions": [f.to_json() for f in self.functions]}


# -- finding the functions -------------------------------------------------------

@dataclass(slots=True)
class _Spec:
    """A user function before counting."""

    name: str
    file: str | None
    first: int
    last: int
    kernel: bool
    texts: dict[int, str]
    statements: StatementMap

    def holds(self, frame: Frame) -> bool:
        return self.first <= frame.line <= self.last and same_file(frame.file, self.file)


class _Sources:
    """Line texts and function spans of the files the capture's frames name."""

    def __init__(self, capture: "Capture"):
        self.capture = capture
        src = capture.source
        self.kernel_texts: dict[int, str] = {}
        if src.text and src.first_line:
            self.kernel_texts = {src.first_line + i: t for i, t in enumerate(src.text.splitlines())}
        self._files: dict[str, tuple[list[str], ast.Module | None] | None] = {}
        # The helpers the capture stored (name, file, def line, lines): the first answer.
        self.stored = [(name, file, first, text.splitlines())
                       for name, file, first, text in capture._store().helper_sources(capture.id)]

    def _cwd(self) -> str | None:
        try:
            return self.capture.run.cwd
        except IrscopeError:
            return None

    def file(self, path: str | None) -> tuple[list[str], ast.Module | None] | None:
        """The file's lines and tree from disk, or None when it is unreadable or no longer
        holds the kernel's stored source (edited since the capture)."""
        if not path:
            return None
        if path in self._files:
            return self._files[path]
        got = None
        text = read_source_file(path, self._cwd())
        if text is not None:
            lines = text.splitlines()
            # A file changed since the capture: its other lines cannot be trusted.
            if not (same_file(path, self.capture.file) and any(
                    n > len(lines) or lines[n - 1] != t for n, t in self.kernel_texts.items())):
                try:
                    tree: ast.Module | None = parse_python(text)
                except (SyntaxError, ValueError):
                    tree = None
                got = (lines, tree)
        self._files[path] = got
        return got

    def def_span(self, path: str | None, line: int, at_def: bool) -> tuple[str, int, int] | None:
        """(name, def line, last line) of the function of ``path`` whose ``def`` is at
        ``line`` (``at_def``) or that encloses ``line`` (innermost)."""
        for name, file, first, lines in self.stored:
            last = first + max(len(lines), 1) - 1
            if same_file(path or "", file) and (first == line if at_def else first <= line <= last):
                return name, first, last
        got = self.file(path)
        if got is None or got[1] is None:
            return None
        return function_span(got[1], line, at_def)

    def texts(self, path: str | None, first: int, last: int) -> dict[int, str]:
        """Line -> text for ``first..last``: the stored sources, else the file."""
        out = {n: self.kernel_texts[n] for n in range(first, last + 1)
               if n in self.kernel_texts and same_file(path or "", self.capture.file)}
        for _name, file, start, lines in self.stored:
            if same_file(path or "", file):
                out.update({n: lines[n - start] for n in range(first, last + 1)
                            if n not in out and 0 <= n - start < len(lines)})
        got = self.file(path)
        if got is not None:
            for n in range(first, last + 1):
                if n not in out and 0 < n <= len(got[0]):
                    out[n] = got[0][n - 1]
        return out


def function_span(tree: ast.Module, line: int, at_def: bool = True) -> tuple[str, int, int] | None:
    """(name, def line, last line) of the function of a parsed file whose ``def`` is at
    ``line`` (``at_def``) or that encloses ``line`` (the innermost one)."""
    best: tuple[str, int, int] | None = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            end = node.end_lineno or node.lineno
            if at_def and node.lineno == line:
                return node.name, node.lineno, end
            if not at_def and node.lineno <= line <= end and (best is None or node.lineno > best[1]):
                best = (node.name, node.lineno, end)
    return best


def _source_stage_defs(capture: "Capture") -> list[tuple[str, Frame]]:
    """(name, def frame) of each user ``@triton.jit`` function of the source stage."""
    if SOURCE not in capture.stages:
        return []
    text = capture.stage(SOURCE).text
    return source_ir_defs(text) if isinstance(text, str) else []


def source_ir_defs(text: str) -> list[tuple[str, Frame]]:
    """(name, def frame) of each user ``@triton.jit`` function of Triton's source IR (the
    IR before inlining holds one ``tt.func`` per function called, located at its ``def``)."""
    try:
        module = parse_as(TTIR, text)
    except (IrscopeError, ValueError):
        return []
    out = []
    for fn in module.functions:
        frame = fn.location.frame
        if frame is None or not frame.line or is_library(frame):
            continue
        m = _SYMBOL_RE.match(fn.name)
        out.append((m.group(1) if m else fn.name, frame))
    return out


def _stage_ops(capture: "Capture") -> dict[str, list[Op]]:
    out = {}
    for name in LOWERING:
        if name not in capture.stages:
            continue
        st = capture.stage(name)
        if st.binary or st.info is None or not st.info.parsed:
            continue
        try:
            out[name] = list(st.module.ops())
        except IrscopeError:
            continue
    return out


def _user_frames(location: Location) -> list[Frame]:
    return [f for f in location.frames if f.line and not is_library(f)]


def _specs(capture: "Capture", frames: Iterable[Frame], sources: _Sources) -> list[_Spec]:
    """The kernel's spec, then one per helper that holds one of ``frames``."""
    src = capture.source
    first = src.first_line or capture.row.first_line or 1
    last = src.last_line or first
    if not src.text:
        span = sources.def_span(capture.file, first, at_def=True)
        if span is not None:
            last = span[2]
    kernel = _Spec(capture.kernel, capture.file, first, last, True, sources.texts(capture.file, first, last),
                   capture.statements)
    specs = [kernel]
    defs = _source_stage_defs(capture)
    for frame in frames:
        if any(s.holds(frame) for s in specs):
            continue
        span = sources.def_span(frame.file, frame.line, at_def=False)
        if span is None:  # no source: the nearest def of the source stage above the line
            above = [(n, f) for n, f in defs if same_file(f.file, frame.file) and f.line <= frame.line
                     and not kernel.holds(f)]
            if not above:
                # No function to name: a line past the kernel's stored source (an old
                # capture's) or of a file neither stored nor readable. Its ops stay
                # unplaced, as on every other view.
                continue
            name, f = max(above, key=lambda d: d[1].line)
            span = (name, f.line, frame.line)
        name, lo, hi = span
        same = [s for s in specs if not s.kernel and s.name == name and same_file(frame.file, s.file)
                and s.first == lo]
        if same:  # a fallback span grows to hold every line seen
            same[0].last = max(same[0].last, frame.line)
            continue
        specs.append(_Spec(name, frame.file, lo, hi, False, {}, StatementMap()))
    for s in specs[1:]:
        if not s.texts:
            s.texts = sources.texts(s.file, s.first, s.last)
        if s.texts and len(s.texts) == s.last - s.first + 1:
            s.statements = statement_map("\n".join(s.texts[n] for n in range(s.first, s.last + 1)), s.first)
    kernel_file = capture.file
    specs[1:] = sorted(specs[1:], key=lambda s: (not same_file(s.file or "", kernel_file), s.file or "", s.first))
    return specs


# -- charging ops ------------------------------------------------------------------

@dataclass(slots=True)
class _Table:
    """Every op of every stage with where each mode charges it (built once per capture)."""

    specs: list[_Spec]
    placed: dict[str, list[tuple[Op, Key | None, Key | None]]]
    """Stage -> (op, own key, call-line key), in text order."""
    call_lines: dict[int, set[int]]
    """Helper index -> the kernel lines whose calls reach it."""
    _keyed: dict[tuple[str, str], dict[Key, list[Op]]] = field(default_factory=dict)

    def by_key(self, stage: str, charge: str) -> dict[Key, list[Op]]:
        """Key -> the ops of ``stage`` charged there under ``charge`` (made once)."""
        got = self._keyed.get((stage, charge))
        if got is not None:
            return got
        out: dict[Key, list[Op]] = {}
        for op, own, call in self.placed.get(stage, ()):
            key = own if charge == OWN else call
            if key is not None:
                out.setdefault(key, []).append(op)
        return self._keyed.setdefault((stage, charge), out)


def _locate(specs: list[_Spec], frame: Frame) -> Key | None:
    for i, s in enumerate(specs):
        if s.holds(frame):
            return i, s.statements.head(frame.line)
    return None


def _build(capture: "Capture") -> _Table:
    stage_ops = _stage_ops(capture)
    frames: dict[tuple[str, int], Frame] = {}
    for ops in stage_ops.values():
        for op in ops:
            for f in _user_frames(op.location):
                frames.setdefault((f.file, f.line), f)
    specs = _specs(capture, frames.values(), _Sources(capture))
    call_lines: dict[int, set[int]] = {}
    placed: dict[str, list[tuple[Op, Key | None, Key | None]]] = {}
    pending: dict[str, list[int]] = {}
    for stage, ops in stage_ops.items():
        rows: list[tuple[Op, Key | None, Key | None]] = []
        for op in ops:
            user = _user_frames(op.location)
            keys = [_locate(specs, f) for f in user]
            own = keys[0] if keys else None
            outer = next((k for k in reversed(keys) if k is not None and k[0] == 0), None)
            if own is not None and own[0] != 0 and outer is not None:
                for k in keys:
                    if k is not None and k[0] != 0:
                        call_lines.setdefault(k[0], set()).add(outer[1])
            if own is not None and own[0] != 0 and outer is None:
                pending.setdefault(stage, []).append(len(rows))  # a chainless stage: resolved below
            rows.append((op, own, outer if outer is not None else own))
        placed[stage] = rows
    for stage, at in pending.items():
        rows = placed[stage]
        for i in at:
            op, own, _ = rows[i]
            assert own is not None  # pending holds helper ops only
            calls = call_lines.get(own[0], set())
            if len(calls) == 1:
                rows[i] = (op, own, (0, next(iter(calls))))
    return _Table(specs, placed, call_lines)


def _table(capture: "Capture") -> _Table:
    return capture._memo(_MEMO, lambda: _build(capture))


_MEMO = "user_functions"


def ready(capture: "Capture") -> bool:
    """Whether :func:`user_functions` has walked ``capture`` already, so that asking
    again costs no parse (a view may then ask on its UI thread)."""
    with capture._lock:
        return _MEMO in capture._cache


def user_functions(capture: "Capture", charge: str = OWN) -> UserFunctions:
    """The kernel and each helper whose ops ``capture`` holds, with per-line op counts
    under ``charge`` (:data:`OWN` or :data:`CALL_LINE`). Both modes list the same
    functions and lines, and their counts add up to the same totals per stage."""
    if charge not in CHARGES:
        raise IrscopeError(f"unknown charge mode {charge!r}; known: {', '.join(CHARGES)}")
    table = _table(capture)
    counts: dict[Key, dict[str, int]] = {}
    for stage in table.placed:
        for key, ops in table.by_key(stage, charge).items():
            counts.setdefault(key, {})[stage] = len(ops)
    seen_own = {own[0] for rows in table.placed.values() for _, own, _ in rows if own is not None}
    out: list[UserFunction] = []
    for i, s in enumerate(table.specs):
        if i and i not in seen_own:
            continue  # a helper none of whose ops survive
        lines = tuple(FunctionLine(n, s.texts.get(n, ""), s.statements.head(n),
                                   counts.get((i, n), {}) if s.statements.head(n) == n else {})
                      for n in range(s.first, s.last + 1))
        out.append(UserFunction(len(out), s.name, s.file, s.first, s.last, s.kernel, lines,
                                tuple(sorted(table.call_lines.get(i, ()))), bool(s.texts)))
    return UserFunctions(charge, tuple(table.placed), tuple(out))


def _spec_index(table: _Table, function: UserFunction) -> int | None:
    for i, s in enumerate(table.specs):
        if s.first == function.first_line and s.kernel == function.kernel and s.file == function.file:
            return i
    return None


def function_line_ops(capture: "Capture", function: UserFunction, line: int,
                      charge: str = OWN) -> dict[str, list[Op]]:
    """Stage -> the ops charged to ``line``'s statement of ``function`` under ``charge``
    (what a view marks when that line is selected)."""
    table = _table(capture)
    i = _spec_index(table, function)
    if i is None:
        return {}
    key = (i, table.specs[i].statements.head(line))
    return {stage: table.by_key(stage, charge).get(key, []) for stage in table.placed}


def op_place(capture: "Capture", stage: str, op: Op, charge: str = OWN) -> tuple[str | None, int, int] | None:
    """(file, def line, statement first line) of the user function line ``op`` is charged
    to, or None (an op with no user frame)."""
    table = _table(capture)
    for o, own, call in table.placed.get(stage, ()):
        if o is op:
            key = own if charge == OWN else call
            if key is None:
                return None
            s = table.specs[key[0]]
            return s.file, s.first, key[1]
    return None
