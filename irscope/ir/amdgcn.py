"""Parser for AMDGCN assembly as Triton's AMD backend writes it (LLVM's AMDGPU asm
printer, the ``.amdgcn`` stage).

What is read:

* functions: a label that is no ``.L`` local label (``_layer_norm_fwd_fused:``) in
  a ``.text`` section starts one; ``.LBB0_2:`` labels and the printer's
  ``; %bb.3:`` comments start its blocks (other ``.L`` labels, ``.Ltmp3:`` and
  ``.Lfunc_begin0:``, only mark addresses for the debug info and start nothing);
* instructions: every other line of a ``.text`` section that does not begin with a
  dot (``v_add_f32_e32 v1, v4, v5``): the mnemonic is the op name, the
  comma-separated operands its operands, and the modifiers after the last operand
  (``offen``, ``row_shr:8 bound_ctrl:1``) its attributes;
* locations: ``.file N "dir" "name"`` (or ``.file N "path"``) names file N, and
  ``.loc N LINE COL ...`` sets the location of the instructions that follow. The
  printer's comment on a ``.loc`` line gives the whole inlined-at chain,
  ``; standard.py:263:15 @[ standard.py:293:36 @[ layer_norm.py:41:18 ] ]``, with
  base names: the parser keeps that chain, and gives each frame the full path of the
  ``.file`` entry of that base name (so Triton's library frames are known as such).
  Without the comment the location is the ``.loc`` frame alone. Line 0 (what LLVM
  prints for "no source line") is an unknown location.

What is skipped: every other directive (``.p2align``, ``.cfi_*``, ``.set``...), the
lines of non-text sections (the ``.amdhsa_kernel`` descriptor in ``.rodata``, the
DWARF ``.debug_*`` tables), and the ``.amdgpu_metadata`` YAML block. None of them is
an op.

So AMDGCN carries the same location chain as LLVM IR (file, line, column and
inlined-at frames): links to and from it join on the whole chain (``same-location``),
as PTX's do, not on the Python line alone as SASS's.
"""

from __future__ import annotations

import re

from irscope.compiler.stages import AMDGCN
from irscope.text_guard import never_raise

from .bracket_scan import split_top
from .model import DIALECT_AMDGCN
from .model import (unknown_op, UNKNOWN_LOCATION, Block, Frame, Function, Instruction, Location,
                    Module, ParseCache)
from .parse_guard import parser

(A_BLANK, A_COMMENT, A_BLOCK, A_DIRECTIVE, A_SECTION, A_TEXT, A_FILE, A_LOC, A_LABEL, A_INSTR,
 A_META_BEGIN, A_META_END, A_UNKNOWN) = range(13)

# .file	1 "sample_kernels" "layer_norm.py"   /   .file 1 "/abs/k.py" md5 0x...
_FILE_RE = re.compile(r'\.file\s+(\d+)\s+"((?:[^"\\]|\\.)*)"(?:\s+"((?:[^"\\]|\\.)*)")?')
# .loc	2 263 15 is_stmt 1  ; standard.py:263:15 @[ standard.py:293:36 @[ layer_norm.py:41:18 ] ]
_LOC_RE = re.compile(r"\.loc\s+(\d+)\s+(\d+)(?:\s+(\d+))?[^;]*(?:;\s*(.*))?$")
# One frame of the comment's chain: a path (no spaces), line and column.
_FRAME_RE = re.compile(r"([^\s@\[\]]+):(\d+):(\d+)")
# .section	.rodata,"a",@progbits   /   .section ".note.GNU-stack","",@progbits
_SECTION_RE = re.compile(r'\.section\s+("[^"]*"|[^\s,]+)')
# _layer_norm_fwd_fused:   ; @_layer_norm_fwd_fused   /   .LBB0_5:   ; %Flow39
_LABEL_RE = re.compile(r"([\w$.]+):\s*(?:;.*)?$")
# ; %bb.3:   ; %._crit_edge.loopexit
_BB_COMMENT_RE = re.compile(r";\s*(%bb\.\d+):")
# v_add_f32_dpp v1, v1, v1 row_shr:8   /   s_endpgm   (an optional trailing ; comment)
_INSTR_RE = re.compile(r"([a-z_][a-z0-9_]*)(?:\s+([^;]*?))?\s*(?:;.*)?$")


def classify(raw: str) -> tuple:
    """Parse one line of AMDGCN assembly into a tuple whose first element is its kind.

    A ``.loc`` line gives ``(A_LOC, file number, line, column, comment frames)``, the
    frames as ``((base name, line, col), ...)`` innermost first; the parser resolves the
    file names (it knows the ``.file`` table)."""
    s = raw.strip()
    if not s:
        return (A_BLANK,)
    if s[0] == ";":
        m = _BB_COMMENT_RE.match(s)
        return (A_BLOCK, m.group(1)) if m else (A_COMMENT,)
    if s[0] == ".":
        if s.startswith(".loc\t") or s.startswith(".loc "):
            m = _LOC_RE.match(s)
            if m is None:
                return (A_DIRECTIVE,)
            chain = tuple((f, int(ln), int(col)) for f, ln, col in _FRAME_RE.findall(m.group(4) or ""))
            return (A_LOC, int(m.group(1)), int(m.group(2)), int(m.group(3) or 0), chain)
        if s.startswith(".file"):
            m = _FILE_RE.match(s)
            if m is None:
                return (A_DIRECTIVE,)
            first, second = m.group(2), m.group(3)
            if second is None:
                path = first
            else:  # directory and name, joined as the LLVM IR parser joins a DIFile's
                path = second if second.startswith("/") or not first else f"{first}/{second}"
            return (A_FILE, int(m.group(1)), path)
        m = _SECTION_RE.match(s)
        if m:
            return (A_SECTION, m.group(1).strip('"'))
        if s == ".text" or s.startswith(".text\t") or s.startswith(".text "):
            return (A_TEXT,)
        if s.startswith(".amdgpu_metadata"):
            return (A_META_BEGIN,)
        if s.startswith(".end_amdgpu_metadata"):
            return (A_META_END,)
        m = _LABEL_RE.match(s)
        if m:
            return (A_LABEL, m.group(1))
        return (A_DIRECTIVE,)
    m = _LABEL_RE.match(s)
    if m:
        return (A_LABEL, m.group(1))
    m = _INSTR_RE.match(s)
    if m:
        text = m.group(2)
        ops = split_top(text) if text else []
        mods = ""
        if ops and " " in ops[-1]:  # 'v1 row_shr:8 bound_ctrl:1': modifiers follow the last operand
            ops[-1], _, mods = ops[-1].partition(" ")
        return (A_INSTR, m.group(1), tuple(ops), mods.strip())
    return (A_UNKNOWN,)


@never_raise(lambda raw: (A_UNKNOWN,), pause_gc=False)  # odd text must never stop a parse
def _safe(raw: str) -> tuple:
    """``classify(raw)``."""
    return classify(raw)


def _base(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


class _Locations:
    """The ``.file`` table of one text, and the locations of its ``.loc`` lines."""

    def __init__(self) -> None:
        self.files: dict[int, str] = {}
        self.by_base: dict[str, str | None] = {}  # base name -> path; None when two paths share it
        self.memo: dict[tuple, Location] = {}

    def add_file(self, number: int, path: str) -> None:
        self.files[number] = path
        base = _base(path)
        known = self.by_base.get(base, path)
        self.by_base[base] = path if known == path else None

    def location(self, t: tuple) -> Location:
        got = self.memo.get(t)
        if got is None:
            got = self.memo[t] = self._resolve(t[1], t[2], t[3], t[4])
        return got

    def _resolve(self, number: int, line: int, col: int, chain: tuple) -> Location:
        if not line:
            return UNKNOWN_LOCATION
        path = self.files.get(number, "")
        if not chain:
            return Location((Frame(path, line, col),), "file")
        frames = []
        for i, (name, ln, c) in enumerate(chain):
            if i == 0 and _base(path) == _base(name):
                full = path
            else:
                full = self.by_base.get(_base(name)) or name
            frames.append(Frame(full, ln, c))
        return Location(tuple(frames), "callsite" if len(frames) > 1 else "file")


@parser(AMDGCN)
def parse_amdgcn(text: str, stage: str = AMDGCN, cache: ParseCache | None = None) -> Module:
    """Parse AMDGCN assembly into a :class:`Module`; never raises on input."""
    memo = cache.amdgcn if cache is not None else {}
    lines = text.split("\n")
    classified = []
    for raw in lines:
        t = memo.get(raw)
        if t is None:
            t = _safe(raw)
            memo[raw] = t
        classified.append(t)
    # Comment frames name files by base name, and an outer frame's file may be
    # declared after its first use: read the whole .file table first.
    locs = _Locations()
    for t in classified:
        if t[0] == A_FILE:
            locs.add_file(t[1], t[2])
    mod = Module(stage)
    all_ops, unknown = mod.all_ops, mod.unknown
    fn: Function | None = None
    block: Block | None = None
    loc = UNKNOWN_LOCATION
    in_text = True  # an assembly file starts in .text
    in_meta = False
    total = understood = 0
    for lineno, (raw, t) in enumerate(zip(lines, classified), 1):
        k = t[0]
        if k == A_BLANK or k == A_COMMENT:
            continue
        total += 1
        understood += 1
        if in_meta:  # the metadata YAML: not assembly at all
            in_meta = k != A_META_END
            continue
        if k == A_META_BEGIN:
            in_meta = True
        elif k == A_SECTION:
            in_text = t[1].startswith(".text")
            block = None
        elif k == A_TEXT:
            in_text = True
        elif not in_text:  # descriptor and debug tables: data, not code
            continue
        elif k == A_INSTR:
            if fn is None:
                fn = _function(mod, "", lineno, raw)
            if block is None:
                block = Block(None, (), [], lineno)
                fn.blocks.append(block)
            op = Instruction(name=t[1], dialect=DIALECT_AMDGCN, results=(), operands=t[2], types="",
                             attributes=t[3], location=loc, line=lineno, text=raw, parent=fn, end_line=lineno)
            block.ops.append(op)
            all_ops.append(op)
            fn.end_line = lineno
        elif k == A_LOC:
            loc = locs.location(t)
        elif k == A_LABEL:
            name = t[1]
            if not name.startswith(".L"):
                fn = _function(mod, name, lineno, raw)
                block = None
                loc = UNKNOWN_LOCATION
            elif name.startswith(".LBB") and fn is not None:
                block = _block(fn, name, lineno)
        elif k == A_BLOCK:
            if fn is not None:
                block = _block(fn, t[1], lineno)
        elif k == A_UNKNOWN:
            understood -= 1
            unknown.append((lineno, raw))
            op = unknown_op(lineno, raw, parent=fn, location=loc, cls=Instruction)
            all_ops.append(op)
            (block.ops if block is not None else mod.globals).append(op)
    mod.total_lines, mod.understood_lines = total, understood
    return mod


def _block(fn: Function, label: str, line: int) -> Block:
    # The printer writes "; %bb.N:" and then the block's .LBB label when it has one:
    # the label names the block the comment opened.
    last = fn.blocks[-1] if fn.blocks else None
    if last is not None and not last.ops and last.label is not None and last.label.startswith("%bb."):
        last.label = label
        return last
    block = Block(label, (), [], line)
    fn.blocks.append(block)
    fn.end_line = max(fn.end_line, line)
    return block


def _function(mod: Module, name: str, line: int, text: str) -> Function:
    fn = Function(name=name, kind=DIALECT_AMDGCN, line=line, end_line=line, text=text)
    mod.functions.append(fn)
    return fn
