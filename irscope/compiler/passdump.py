"""Split per-pass dump streams into snapshots.

``MLIR_ENABLE_DUMP=1`` prints the whole module before every MLIR pass, each copy
headed by a comment line; ``LLVM_IR_ENABLE_DUMP=1`` prints LLVM IR (and, for codegen
passes, MIR) after every LLVM pass. Whatever else the process wrote to the same
stream (warnings, pass-manager chatter) is kept apart in ``PassDump.other`` rather
than left inside a snapshot body.

Scanning uses whole-text regex searches, so the cost follows the number of
snapshots and stray lines, not the size of the stream.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterator

from irscope.text_guard import never_raise

from .stages import KIND_LLVM, KIND_MIR, KIND_MLIR

# Python's re tries a '^'-anchored multiline pattern at every position, ~7 ns a
# character; a pattern that begins with a literal is found by a fast scan instead.
# So every pattern searched over whole streams starts with a literal, and line
# starts are checked afterwards.

# What every header line holds (MLIR, Triton-internal and LLVM ones).
_ANY_DUMP_RE = re.compile(r"IR Dump ")
# Any MLIR dump header; the exact format is parsed by the two patterns below.
_MLIR_ANY_RE = re.compile(r"// -----// [^\n]*")
# // -----// IR Dump Before TritonGPUCoalesce (tritongpu-coalesce) ('builtin.module' operation) //----- //
# // -----// IR Dump Before CanonicalizerPass: canonicalize{max-iterations=10} ('tt.func' operation: @f) //----- //
# // -----// IR Dump After TritonGPUPipeline Failed (tritongpu-pipeline) ('builtin.module' operation) //----- //
_MLIR_HEADER_RE = re.compile(
    r"// -----// IR Dump (?P<when>Before|After) (?P<pass>.+?)(?P<failed1> Failed)?"
    r"(?:: (?P<arg1>[\w.$-]+)(?P<opts1>\{.*?\})?| \((?P<arg2>[\w.$-]+)(?P<opts2>\{.*?\})?\))?"
    r"(?P<failed2> Failed)? \('(?P<anchor>[^']+)' operation(?:: @(?P<name>.*?))?\) //----- //\s*$")
# // -----// SoftwarePipeliner internal IR Dump After: LowerLoops
_MLIR_INTERNAL_RE = re.compile(
    r"// -----// (?P<who>.+?) internal IR Dump (?P<when>Before|After):? (?P<pass>.+?)\s*$")

# ; *** IR Dump After InstCombinePass on matmul_kernel ***
# *** IR Dump After Module Verifier (verify) ***
# # *** IR Dump After NVPTX DAG->DAG Pattern Instruction Selection (nvptx-isel) ***:
_LLVM_HEADER_RE = re.compile(
    r"\*\*\* IR Dump (?P<when>Before|After) (?P<rest>[^\n]*?) \*\*\*:?[ \t\r]*(?=\n|$)")
# Pass-manager debug output, found by its literal middle ("ing pass"...); the line
# must then start with one of _NOISE_WORDS.
# Running pass: InstCombinePass on add_kernel (32 instructions)
_NOISE_RE = re.compile(r"ing (?:pass|analysis|all)")
_NOISE_WORDS = ("Running pass", "Running analysis", "Invalidating analysis",
                "Invalidating all non-preserved", "Clearing all analysis results",
                "Skipping pass")
# /path/knobs.py:504: UserWarning: TRITON_DEFAULT_FP_FUSION is unset ...
_PY_WARNING_RE = re.compile(r"\.py:\d+: \w*Warning: ")
# A pass timing report (MLIR_ENABLE_TIMING / LLVM_ENABLE_TIMING), printed when a pass
# manager is destroyed, so often right after the last LLVM dump of a stage: from its
# first ===---=== banner to its "Total" line.
_REPORT_START_RE = re.compile(r"===-{20,}===")
_REPORT_END_RE = re.compile(r"%\)[ \t]+Total[ \t\r]*(?=\n|$)")
# A line that is neither blank nor an alias definition (#loc3 = ..., !t = ...).
_NOT_ALIAS_RE = re.compile(r"\n(?![#!]|[ \t\r]*(?:\n|$))")
_LEGACY_ARG_RE = re.compile(r"^(?P<desc>.*?)\s*\((?P<arg>[\w.-]+)\)$")


@dataclass(slots=True, eq=False)
class PassSnapshot:
    """One dump in a per-pass stream."""

    index: int
    """Position in the stream, from 0."""
    pass_name: str
    """Pass name: ``TritonGPUCoalesce``, ``InstCombinePass``, ``Module Verifier``."""
    argument: str
    """Pass argument (``tritongpu-coalesce``, ``verify``), '' when not printed."""
    options: str
    """Pass options text (``{max-iterations=10 ...}``, 3.8+), '' when none."""
    anchor_op: str
    """Op the pass ran on: ``builtin.module``, ``tt.func`` (MLIR); '' for LLVM."""
    anchor_name: str
    """Symbol of the anchor (``@name``), or LLVM's target (``add_kernel``, ``[module]``)."""
    kind: str
    """``before``, ``after``, ``after-failed``, ``internal`` (Triton's own dumps)
    or ``unknown`` (a header line in no known format)."""
    family: str
    """``mlir``, ``llvm`` (LLVM IR) or ``mir`` (machine IR of codegen passes)."""
    header: str
    """The header line as written."""
    line_offset: int
    """Stream line of the header (1-based): body line n is stream line
    ``line_offset + n`` (while no stray text was cut out before it)."""
    stream: str = field(repr=False, default="")
    """The whole stream (shared, not copied)."""
    spans: tuple[tuple[int, int], ...] = ()
    """(start, end) character ranges of the body in ``stream``, stray lines excluded."""

    @property
    def text(self) -> str:
        """The body (computed on each access from ``stream``; keep it if reused)."""
        if len(self.spans) == 1:
            s, e = self.spans[0]
            return self.stream[s:e]
        return "".join(self.stream[s:e] for s, e in self.spans)


@dataclass(slots=True, eq=False)
class PassDump:
    """Snapshots of a stream plus the stray lines found outside any snapshot body.

    Iterates, indexes and measures like the list of snapshots.
    """

    snapshots: list[PassSnapshot] = field(default_factory=list)
    other: list[tuple[int, str]] = field(default_factory=list)
    """(stream line, text) of non-blank lines that belong to no snapshot."""

    def __iter__(self) -> Iterator[PassSnapshot]:
        return iter(self.snapshots)

    def __len__(self) -> int:
        return len(self.snapshots)

    def __getitem__(self, i):
        return self.snapshots[i]


class _Lines:
    """Incremental character-offset -> line-number conversion (offsets only grow)."""

    __slots__ = ("text", "pos", "line")

    def __init__(self, text: str) -> None:
        self.text, self.pos, self.line = text, 0, 1

    def at(self, offset: int) -> int:
        if offset < self.pos:
            return self.text.count("\n", 0, offset) + 1
        self.line += self.text.count("\n", self.pos, offset)
        self.pos = offset
        return self.line


def _line_end(text: str, pos: int, limit: int) -> int:
    """Offset just past the newline ending the line at ``pos`` (or ``limit``)."""
    e = text.find("\n", pos, limit)
    return limit if e < 0 else e + 1


def _trim(text: str, start: int, end: int) -> int:
    """``end`` moved back over trailing blank lines."""
    while end > start and text[end - 1] in "\n\r \t":
        end -= 1
    if end < len(text) and end > start and text[end] in "\r\n":
        end = _line_end(text, end, len(text))
    return end


def _stray(text: str, start: int, end: int, allowed, lines: _Lines, out: list,
           spans: list, suspect: re.Pattern | None = None) -> None:
    """Walk [start, end) line by line; lines ``allowed`` rejects go to ``out``.

    With ``suspect`` (a pattern finding the first line that might be rejected), a
    range where it finds nothing is taken whole without the walk.
    """
    if suspect is not None:
        # ``suspect`` looks after each newline, so the first line is checked here
        first = text[start:start + 1] if start < end else ""
        if (not first or first in "#!\r\n") and suspect.search(text, start, end) is None:
            if end > start:
                spans.append((start, end))
            return
    pos = start
    run = start
    while pos < end:
        e = _line_end(text, pos, end)
        line = text[pos:e].rstrip("\r\n")
        if line.strip() and not allowed(line):
            if pos > run:
                spans.append((run, pos))
            out.append((lines.at(pos), line))
            run = e
        pos = e
    if end > run:
        spans.append((run, end))


def _pre_ok(line: str) -> bool:
    return line[0] in "#!" or line.startswith("{-#")


def _post_ok() -> Callable[[str], bool]:
    """Check for lines after the module: ``#loc`` definitions and resource blocks."""
    in_resource = False

    def ok(line: str) -> bool:
        nonlocal in_resource
        if line.startswith("{-#"):
            in_resource = "#-}" not in line
            return True
        if in_resource:
            in_resource = "#-}" not in line
            return True
        return line[0] in "#!"

    return ok


def _mlir_header(header: str) -> tuple[str, str, str, str, str, str]:
    """(pass, argument, options, anchor op, anchor name, kind) of an MLIR header."""
    m = _MLIR_HEADER_RE.match(header)
    if m:
        kind = m["when"].lower()
        if m["failed1"] or m["failed2"]:
            kind = "after-failed"
        return (m["pass"], m["arg1"] or m["arg2"] or "", m["opts1"] or m["opts2"] or "",
                m["anchor"], m["name"] or "", kind)
    m = _MLIR_INTERNAL_RE.match(header)
    if m:
        return (m["pass"], "", "", "", m["who"], "internal")
    return (header[11:].strip(" /"), "", "", "", "", "unknown")


def split_mlir_pass_dump(text: str) -> PassDump:
    """Split an ``MLIR_ENABLE_DUMP`` stream into :class:`PassSnapshot` s.

    Knows the header formats up to 3.7 (``Pass (arg)``), 3.8+ (``Pass: arg{opts}``),
    nested anchors (``('tt.func' operation: @name)``), ``Failed`` dumps and Triton's
    ``SoftwarePipeliner internal IR Dump After: X`` lines. Text outside the module
    (and its trailing ``#loc`` definitions) goes to ``PassDump.other``; LLVM dumps
    in the same stream end a snapshot and are skipped (see :func:`split_pass_dump`).
    """
    return split_pass_dump(text, (KIND_MLIR,))


def _unsplit(text: str, families: tuple[str, ...] = ()) -> PassDump:
    """Fallback of a failed split (the guard calls it with the split's arguments):
    every non-blank line reported in ``other``."""
    return PassDump([], [(i, t) for i, t in enumerate(text.split("\n"), 1) if t.strip()])


@never_raise(_unsplit)
def split_pass_dump(text: str, families: tuple[str, ...] = (KIND_MLIR, KIND_LLVM)) -> PassDump:
    """Split a stream holding MLIR and/or LLVM per-pass dumps (both switches on).

    ``families`` picks which snapshots to return (``mlir``, ``llvm``; the latter
    includes MIR); dumps of the other family only delimit the ones kept.
    """
    dump = PassDump()
    lines = _Lines(text)
    heads: list[tuple[int, str, re.Match[str]]] = []
    # One scan for the words every header holds, then a look at each hit's line.
    for hit in _ANY_DUMP_RE.finditer(text):
        pos = hit.start()
        ls = text.rfind("\n", 0, pos) + 1
        if text.startswith("// -----// ", ls):
            head = _MLIR_ANY_RE.match(text, ls)
            if head is not None and (not heads or heads[-1][0] != ls):  # (it matches: the prefix is there)
                heads.append((ls, KIND_MLIR, head))
            continue
        m = _LLVM_HEADER_RE.match(text, pos - 4) if pos >= 4 else None
        if m is None:
            continue
        if pos - 4 == ls or (pos - 6 == ls and text[ls:ls + 2] in ("; ", "# ")):
            heads.append((ls, KIND_LLVM, m))
    first = heads[0][0] if heads else len(text)
    _stray(text, 0, first, lambda _l: False, lines, dump.other, [])
    for i, (pos, family, m) in enumerate(heads):
        if family not in families:
            continue
        start = _line_end(text, m.end(), len(text))
        end = heads[i + 1][0] if i + 1 < len(heads) else len(text)
        head_line = lines.at(pos)
        if family == KIND_MLIR:
            dump.snapshots.append(_mlir_snapshot(text, m, start, end, head_line, lines,
                                                 dump, len(dump.snapshots)))
        else:
            dump.snapshots.append(_llvm_snapshot(text, m, start, end, head_line, lines,
                                                 dump, len(dump.snapshots)))
    return dump


def _module_start(text: str, start: int, end: int) -> int:
    """Offset of the ``module`` line in [start, end), -1 when none."""
    if text.startswith(("module", '"builtin.module"'), start, end):
        return start
    found = [i for i in (text.find("\nmodule", start, end),
                         text.find('\n"builtin.module"', start, end)) if i >= 0]
    return min(found) + 1 if found else -1


def _mlir_snapshot(text: str, m: re.Match, start: int, end: int, head_line: int,
                   lines: _Lines, dump: PassDump, index: int) -> PassSnapshot:
    header = m.group().rstrip("\r")
    spans: list[tuple[int, int]] = []
    mstart = _module_start(text, start, end)
    if mstart < 0:
        spans.append((start, _trim(text, start, end)))
    else:
        _stray(text, start, mstart, _pre_ok, lines, dump.other, spans, _NOT_ALIAS_RE)
        # the module's closing brace: the first '}' in column 0
        close = text.find("\n}", mstart, end)
        mend = _line_end(text, close + 1, end) if close >= 0 else end
        spans.append((mstart, mend))
        if mend < end:
            _stray(text, mend, _trim(text, mend, end), _post_ok(), lines, dump.other,
                   spans, _NOT_ALIAS_RE)
    pass_name, arg, opts, anchor, name, kind = _mlir_header(header)
    return PassSnapshot(index, pass_name, arg, opts, anchor, name, kind, KIND_MLIR, header,
                        head_line, text, tuple(_merge(spans)))


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if e <= s:
            continue
        if out and out[-1][1] == s:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out or [(0, 0)]


def _llvm_header(text: str, m: re.Match) -> tuple[str, str, str, str]:
    """(pass, argument, target, family) of an LLVM header match."""
    pos = m.start()
    prefix = text[pos - 2:pos] if pos >= 2 else ""
    rest = m["rest"]
    family = KIND_MIR if prefix == "# " else KIND_LLVM
    if prefix == "; ":
        i = rest.rfind(" on ")
        if i >= 0:
            return rest[:i], "", rest[i + 4:], family
        return rest, "", "", family
    lm = _LEGACY_ARG_RE.match(rest)
    if lm:
        return lm["desc"], lm["arg"], "", family
    return rest, "", "", family


def split_llvm_pass_dump(text: str) -> PassDump:
    """Split an ``LLVM_IR_ENABLE_DUMP`` stream into :class:`PassSnapshot` s.

    Headers: ``; *** IR Dump After X on Y ***`` (new pass manager), ``*** IR Dump After
    Desc (arg) ***`` (legacy) and ``# *** IR Dump After Desc (arg) ***:`` (codegen, MIR).
    Pass-manager chatter (``Running pass: ...``) and Python warnings go to ``other``.
    """
    return split_pass_dump(text, (KIND_LLVM,))


def _noise(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """(start, end) of the stray lines in [start, end), newline included, in order."""
    found = []
    for n in _NOISE_RE.finditer(text, start, end):
        ls = text.rfind("\n", start, n.start()) + 1 or start
        if text.startswith(_NOISE_WORDS, ls, end):
            found.append((ls, _line_end(text, n.end(), end)))
    for w in _PY_WARNING_RE.finditer(text, start, end):
        ls = text.rfind("\n", start, w.start()) + 1 or start
        le = _line_end(text, w.end(), end)
        if text.startswith("  ", le, end):  # the source line Python quotes
            le = _line_end(text, le, end)
        found.append((max(ls, start), le))
    pos = start
    while True:
        r = _REPORT_START_RE.search(text, pos, end)
        if r is None:
            break
        ls = text.rfind("\n", start, r.start()) + 1 or start
        stop = _REPORT_END_RE.search(text, r.end(), end)
        le = _line_end(text, stop.end(), end) if stop else end
        found.append((ls, le))
        pos = le
    return sorted(found)


def _llvm_snapshot(text: str, m: re.Match, start: int, end: int, head_line: int,
                   lines: _Lines, dump: PassDump, index: int) -> PassSnapshot:
    spans: list[tuple[int, int]] = []
    run = start
    for ns, ne in _noise(text, start, end):
        if ns < run:
            continue
        spans.append((run, ns))
        first = lines.at(ns)
        for k, ln in enumerate(text[ns:ne].rstrip("\n").split("\n")):
            dump.other.append((first + k, ln.rstrip("\r")))
        run = ne
    spans.append((run, end))
    spans = _merge([(s, _trim(text, s, e)) for s, e in spans])
    pass_name, arg, target, family = _llvm_header(text, m)
    header = text[text.rfind("\n", 0, m.start()) + 1:m.end()].rstrip("\r")
    return PassSnapshot(index, pass_name, arg, "", "", target, m["when"].lower(), family,
                        header, head_line, text, tuple(spans))
