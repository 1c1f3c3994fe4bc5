"""Parser for SASS as ``nvdisasm -g -c`` prints it (``-gi`` adds inlining).

Functions are the ``.text.<name>`` sections; ``//## File "/abs/k.py", line 37``
(optionally followed by ``inlined at "/abs/k.py", line 12`` links) sets the source
location of the instructions that follow; ``.L_x_N:`` labels start blocks.
"""

from __future__ import annotations

import re

from irscope.text_guard import never_raise

from .parse_guard import parser
from .bracket_scan import LABEL_RE as _LABEL_RE
from .bracket_scan import split_top
from irscope.compiler.stages import SASS

from .model import DIALECT_SASS
from .model import (unknown_op, UNKNOWN_LOCATION, Block, Frame, Function, Instruction, Location,
                    Module, ParseCache)

(S_BLANK, S_COMMENT, S_SEP, S_DIRECTIVE, S_SECTION, S_LABEL, S_LOC, S_INSTR, S_UNKNOWN,
 S_ENCODING) = range(10)

# /*00d0*/              @!P0 LDG.E R4, desc[UR8][R2.64] ;
_INSTR_RE = re.compile(r"/\*([0-9a-fA-F]+)\*/\s+(@!?U?P[T\d]+\s+)?([A-Z][A-Za-z0-9_.]*)"
                       r"(?:\s+(.*?))?\s*;\s*(?:/\*.*\*/\s*)?$")
# /* 0x000fe40000000f00 */
_ENCODING_RE = re.compile(r"/\*\s*0x[0-9a-fA-F]+\s*\*/\s*$")
# //## File "/abs/k.py", line 37 inlined at "/abs/k.py", line 12
_LOC_RE = re.compile(r'//## File "((?:[^"\\]|\\.)*)", line (\d+)((?: inlined at "(?:[^"\\]|\\.)*",'
                     r' line \d+)*)\s*$')
_INLINED_RE = re.compile(r'inlined at "((?:[^"\\]|\\.)*)", line (\d+)')
# .section	.text.helper_kernel,"ax",@progbits
_SECTION_RE = re.compile(r"\.section\s+([^\s,]+)")


def classify(raw: str) -> tuple:
    """Parse one line of nvdisasm output into a tuple whose first element is its kind."""
    s = raw.strip()
    if not s:
        return (S_BLANK,)
    if s.startswith("/*"):
        m = _INSTR_RE.match(s)
        if m:
            offset, pred, opcode, ops = m.groups()
            return (S_INSTR, int(offset, 16), (pred or "").strip(), opcode,
                    tuple(split_top(ops)) if ops else ())
        if _ENCODING_RE.match(s):
            return (S_ENCODING,)
        return (S_UNKNOWN,)
    if s.startswith("//"):
        if s.startswith("//##"):
            m = _LOC_RE.match(s)
            if m:
                frames = (Frame(m.group(1), int(m.group(2)), 0),) + tuple(
                    Frame(f, int(ln), 0) for f, ln in _INLINED_RE.findall(m.group(3)))
                return (S_LOC, Location(frames, "callsite" if len(frames) > 1 else "file"))
            return (S_LOC, None)  # //## ------ <name end> ------ and the like
        if s.startswith("//----"):
            return (S_SEP,)
        return (S_COMMENT,)
    m = _SECTION_RE.match(s)
    if m:
        return (S_SECTION, m.group(1))
    m = _LABEL_RE.match(s)
    if m:
        return (S_LABEL, m.group(1))
    if s.startswith("."):
        return (S_DIRECTIVE,)
    return (S_UNKNOWN,)


@never_raise(lambda raw: (S_UNKNOWN,), pause_gc=False)  # odd text must never stop a parse
def _safe(raw: str) -> tuple:
    """``classify(raw)``."""
    return classify(raw)


@parser(SASS)
def parse_sass(text: str, stage: str = SASS, cache: ParseCache | None = None) -> Module:
    """Parse ``nvdisasm -g -c`` output into a :class:`Module`; never raises on input."""
    memo = cache.sass if cache is not None else {}
    mod = Module(stage)
    all_ops, unknown = mod.all_ops, mod.unknown
    fn: Function | None = None
    block: Block | None = None
    loc = UNKNOWN_LOCATION
    total = understood = 0
    lineno = 0
    for raw in text.split("\n"):
        lineno += 1
        t = memo.get(raw)
        if t is None:
            t = _safe(raw)
            memo[raw] = t
        k = t[0]
        if k == S_BLANK or k == S_COMMENT:
            continue
        if k == S_SEP:  # a new section of the listing
            fn = block = None
            continue
        total += 1
        understood += 1
        if k == S_INSTR:
            if fn is None:
                fn = _function(mod, "", lineno, raw)
            if block is None:
                block = Block(None, (), [], lineno)
                fn.blocks.append(block)
            op = Instruction(name=t[3], dialect=DIALECT_SASS, results=(), operands=t[4], types="", attributes="",
                             location=loc, line=lineno, text=raw, parent=fn, end_line=lineno, predicate=t[2],
                             offset=t[1])
            block.ops.append(op)
            all_ops.append(op)
            fn.end_line = lineno
        elif k == S_LOC:
            if t[1] is not None:
                loc = t[1]
        elif k == S_SECTION:
            fn = block = None
            loc = UNKNOWN_LOCATION
            if t[1].startswith(".text."):
                fn = _function(mod, t[1][6:], lineno, raw)
        elif k == S_LABEL:
            name = t[1]
            if fn is not None and (fn.blocks or not (name == fn.name or name.startswith(".text."))):
                block = Block(name, (), [], lineno)
                fn.blocks.append(block)
                fn.end_line = lineno
        elif k == S_UNKNOWN:
            understood -= 1
            unknown.append((lineno, raw))
            op = unknown_op(lineno, raw, parent=fn, location=loc, cls=Instruction)
            all_ops.append(op)
            (block.ops if block is not None else mod.globals).append(op)
    mod.total_lines, mod.understood_lines = total, understood
    return mod


def _function(mod: Module, name: str, line: int, text: str) -> Function:
    fn = Function(name=name, kind=DIALECT_SASS, line=line, end_line=line, text=text)
    mod.functions.append(fn)
    return fn
