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
from typing import Iterator

# Any MLIR dump header; the exact format is parsed by the two patterns below.
_MLIR_ANY_RE = re.compile(r"^// -----// [^\n]*", re.M)
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
# module {   /   module attributes {...} {   /   "builtin.module"() ({
_MODULE_START_RE = re.compile(r'^(?:module\b|"builtin\.module")', re.M)
# the module's closing brace: the first '}' in column 0 after the module starts
_COL0_CLOSE_RE = re.compile(r"^\}", re.M)

# ; *** IR Dump After InstCombinePass on matmul_kernel ***
# *** IR Dump After Module Verifier (verify) ***
# # *** IR Dump After NVPTX DAG->DAG Pattern Instruction Selection (nvptx-isel) ***:
_LLVM_HEADER_RE = re.compile(
    r"^(?P<prefix>[;#] )?\*\*\* IR Dump (?P<when>Before|After) (?P<rest>.*?) \*\*\*:?[ \t\r]*$",
    re.M)
# Lines that are not IR: pass-manager debug output, Python warnings (+ their source line).
# Running pass: InstCombinePass on add_kernel (32 instructions)
# /path/knobs.py:504: UserWarning: TRITON_DEFAULT_FP_FUSION is unset ...
_LLVM_NOISE_RE = re.compile(
    r"^(?:(?:Running (?:pass|analysis)|Invalidating (?:analysis|all non-preserved)"
    r"|Clearing all analysis results|Skipping pass)[^\n]*"
    r"|[^\n]*\.py:\d+: \w*Warning: [^\n]*(?:\n  [^\n]*)?)(?:\n|$)", re.M)
# A line that is neither blank nor an alias definition (#loc3 = ..., !t = ...).
_NOT_ALIAS_RE = re.compile(r"^(?![#!]|[ \t\r]*$)", re.M)
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
    if suspect is not None and suspect.search(text, start, end) is None:
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


def _post_ok() -> "callable":
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
    return split_pass_dump(text, ("mlir",))


def split_pass_dump(text: str, families: tuple[str, ...] = ("mlir", "llvm")) -> PassDump:
    """Split a stream holding MLIR and/or LLVM per-pass dumps (both switches on).

    ``families`` picks which snapshots to return (``mlir``, ``llvm``; the latter
    includes MIR); dumps of the other family only delimit the ones kept.
    """
    dump = PassDump()
    lines = _Lines(text)
    heads = [(m.start(), "mlir", m) for m in _MLIR_ANY_RE.finditer(text)]
    llvm_heads = [(m.start(), "llvm", m) for m in _LLVM_HEADER_RE.finditer(text)]
    if heads and llvm_heads:
        heads = sorted(heads + llvm_heads, key=lambda h: h[0])
    else:
        heads = heads or llvm_heads
    first = heads[0][0] if heads else len(text)
    _stray(text, 0, first, lambda _l: False, lines, dump.other, [])
    for i, (pos, family, m) in enumerate(heads):
        if family not in families:
            continue
        start = _line_end(text, m.end(), len(text))
        end = heads[i + 1][0] if i + 1 < len(heads) else len(text)
        head_line = lines.at(pos)
        if family == "mlir":
            dump.snapshots.append(_mlir_snapshot(text, m, start, end, head_line, lines,
                                                 dump, len(dump.snapshots)))
        else:
            dump.snapshots.append(_llvm_snapshot(text, m, start, end, head_line, lines,
                                                 dump, len(dump.snapshots)))
    return dump


def _mlir_snapshot(text: str, m: re.Match, start: int, end: int, head_line: int,
                   lines: _Lines, dump: PassDump, index: int) -> PassSnapshot:
    header = m.group().rstrip("\r")
    spans: list[tuple[int, int]] = []
    mstart = _MODULE_START_RE.search(text, start, end)
    if mstart is None:
        spans.append((start, _trim(text, start, end)))
    else:
        _stray(text, start, mstart.start(), _pre_ok, lines, dump.other, spans,
               _NOT_ALIAS_RE)
        close = _COL0_CLOSE_RE.search(text, mstart.start(), end)
        mend = _line_end(text, close.start(), end) if close else end
        spans.append((mstart.start(), mend))
        if mend < end:
            _stray(text, mend, _trim(text, mend, end), _post_ok(), lines, dump.other,
                   spans, _NOT_ALIAS_RE)
    pass_name, arg, opts, anchor, name, kind = _mlir_header(header)
    return PassSnapshot(index, pass_name, arg, opts, anchor, name, kind, "mlir", header,
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


def _llvm_header(m: re.Match) -> tuple[str, str, str, str]:
    """(pass, argument, target, family) of an LLVM header match."""
    prefix, rest = m["prefix"], m["rest"]
    family = "mir" if prefix == "# " else "llvm"
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
    return split_pass_dump(text, ("llvm",))


def _llvm_snapshot(text: str, m: re.Match, start: int, end: int, head_line: int,
                   lines: _Lines, dump: PassDump, index: int) -> PassSnapshot:
    spans: list[tuple[int, int]] = []
    run = start
    for n in _LLVM_NOISE_RE.finditer(text, start, end):
        if n.end() == n.start():
            continue
        spans.append((run, n.start()))
        first = lines.at(n.start())
        for k, ln in enumerate(n.group().rstrip("\n").split("\n")):
            dump.other.append((first + k, ln.rstrip("\r")))
        run = n.end()
    spans.append((run, end))
    spans = _merge([(s, _trim(text, s, e)) for s, e in spans])
    pass_name, arg, target, family = _llvm_header(m)
    return PassSnapshot(index, pass_name, arg, "", "", target, m["when"].lower(), family,
                        m.group().rstrip("\r"), head_line, text, tuple(spans))
