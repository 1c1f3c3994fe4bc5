"""Parser for LLVM IR (``.llir``, LLVM per-pass snapshots) and the MIR that codegen
passes print (``# Machine code for function ...``).

Instructions carry ``!dbg !N``; the ``!DILocation`` / ``!DISubprogram`` /
``!DIFile`` nodes at the end of the module turn that into a frame chain (the
``inlinedAt`` links are the call sites of inlined helpers). Function-level pass dumps
print no metadata: pass ``metadata`` (the table of an earlier module dump) to
resolve them anyway. MIR lines end with ``; k.py:13:24 @[ ... ]``, which is used
directly (base names only).
"""

from __future__ import annotations

import functools
import re
from typing import Callable

from irscope.text_guard import never_raise

from .parse_guard import parser
from .bracket_scan import matching, split_top
from .line_shapes import Templater
from .forms import erase_names, normalise_op_text
from .llvm_loc import FIELD_RE, META_RE, chain_location, debug_info, resolve_locations
from irscope.compiler.stages import LLIR

from .model import DIALECT_LLVM, DIALECT_MIR
from .model import (new_lazy_instruction, unknown_op, UNKNOWN_LOCATION, Block, Function, Instruction,
                    LazyInstruction, Location, Module, ParseCache, Value)

(L_BLANK, L_COMMENT, L_DEFINE, L_DECLARE, L_GLOBAL, L_LABEL, L_INSTR, L_CLOSE, L_META,
 L_MISC, L_UNKNOWN, L_MIR_FUNC, L_MIR_END, L_MIR_BLOCK, L_MIR_MISC) = range(15)

# define ptx_kernel void @add_kernel(ptr addrspace(1) %0, i32 %3) local_unnamed_addr #0 !dbg !4 {
_DEFINE_RE = re.compile(r'define\s+(.*?)@("(?:[^"\\]|\\.)*"|[-\w.$]+)(\(.*)$')
# declare i32 @llvm.nvvm.read.ptx.sreg.tid.x() #1
_DECLARE_RE = re.compile(r'declare\s+.*?@("(?:[^"\\]|\\.)*"|[-\w.$]+)\(')
# @global_smem = external addrspace(3) global [0 x i8], align 16
_GLOBAL_RE = re.compile(r'@("(?:[^"\\]|\\.)*"|[-\w.$]+) = (.*)$')
# 5:   /   .lr.ph:   /   ; <label>:5:        ; preds = %4
_LABEL_RE = re.compile(r'(?:; <label>:)?([-\w.$]+|"[^"]*"):\s*(?:;.*)?$')
# operands of:  %6 = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x(), !dbg !7
_VALUE_RE = re.compile(r'[%@](?:[-\w.$]+|"[^"]*")')
# the same for a line without '@': a literal first character is found by a fast scan,
# twice as fast as the character class above
_LOCAL_RE = re.compile(r'%(?:[-\w.$]+|"[^"]*")')
_STRING_RE = re.compile(r'c?"(?:[^"\\]|\\.)*"')
_MISC_PREFIXES = ("source_filename", "target ", "attributes #", "module asm", "uselistorder",
                  "$")
# a case line of a switch:   i32 0, label %done
_SWITCH_CASE_RE = re.compile(r"i\d+ -?\d+, label %")
_CALL_PREFIXES = frozenset({"tail", "musttail", "notail"})
# Every LLVM IR instruction: an indented line whose first word is none of these is
# not understood (garbage must not count as coverage).
_OPCODES = frozenset("""
ret br switch indirectbr invoke callbr resume catchswitch catchret cleanupret unreachable
fneg add fadd sub fsub mul fmul udiv sdiv fdiv urem srem frem shl lshr ashr and or xor
extractelement insertelement shufflevector extractvalue insertvalue alloca load store
fence cmpxchg atomicrmw getelementptr trunc zext sext fptrunc fpext fptoui fptosi uitofp
sitofp ptrtoint ptrtoaddr inttoptr bitcast addrspacecast icmp fcmp phi select freeze call
va_arg landingpad catchpad cleanuppad""".split())

# MIR: "# Machine code for function add_kernel: IsSSA, TracksLiveness"
_MIR_FUNC_RE = re.compile(r"# Machine code for function ([^:]+):")
# 0B	bb.0 (%ir-block.6):   /   bb.1.L1:
_MIR_BLOCK_RE = re.compile(r"(?:\d+B\t)?(bb\.\d+[-\w.$]*)(?: \(([^)]*)\))?:\s*(?:;.*)?$")
# 16B	  %18:b64 = LD_i64 0, ... debug-location !7; kernels.py:13:24 @[ k.py:3:4 ]
_MIR_INSTR_RE = re.compile(r"(?:\d+B)?\s+(.*)$")
_MIR_LOC_RE = re.compile(r";\s+([^\s;\"]+:\d+:\d+(?: @\[ .*\])?)\s*$")
_MIR_FRAME_RE = re.compile(r"([^\s@\[\]]+):(\d+):(\d+)")
_MIR_VALUE_RE = re.compile(r"[%$][\w.]+")
_MIR_VREG_RE = re.compile(r"%[\w.]+")  # faster, for lines without physical registers
_MIR_MISC = ("successors:", "liveins:", "predecessors:", "Function Live Ins:",
             "Frame Objects:", "Constant Pool:", "Jump Tables:", "fi#", "cp#", "%jump-table")


def _instr(s: str) -> tuple:
    """An IR instruction line (already stripped). Plain string searches: this runs
    for every new line of every LLVM snapshot."""
    results: tuple = ()
    rest = s
    if s[0] == "%":
        eq = s.find(" = ")
        if eq > 0:
            results, rest = (s[:eq],), s[eq + 3:]
    sp = rest.find(" ")
    opcode = rest[:sp] if sp > 0 else rest
    if opcode in _CALL_PREFIXES:
        sp2 = rest.find(" ", sp + 1)
        opcode = rest[sp + 1:sp2] if sp2 > 0 else rest[sp + 1:]
    opcode = opcode.rstrip(",")
    if opcode not in _OPCODES:
        return (L_UNKNOWN,)
    return _instr_tail(results, rest, opcode)


def _dbg_ref(s: str, start: int = 0) -> tuple[str, int]:
    """(``!N`` of the last ``, !dbg !N`` from ``start`` on, where it starts); ('', -1).
    The last: attachments follow the operands, and a string operand may hold the
    same text; and it is found from the end of the line, where it is, at once."""
    i = s.rfind(", !dbg !", start)
    if i < 0:
        return "", -1
    j = s.find(",", i + 8)
    return (s[i + 7:j] if j >= 0 else s[i + 7:]).strip(), i


def _instr_tail(results: tuple, rest: str, opcode: str) -> tuple:
    """The instruction tuple once its results and opcode are known; ``rest`` is the
    line from the opcode (or its ``tail``) on."""
    ref, i = _dbg_ref(rest)
    body = rest[:i] if i >= 0 else rest
    if '"' in body:
        body = _STRING_RE.sub('""', body)
    values = _VALUE_RE.findall(body) if "@" in body else _LOCAL_RE.findall(body)
    # The form (last) is filled once per template for snapshots, on demand otherwise.
    return (L_INSTR, opcode, results, tuple(values), ref, UNKNOWN_LOCATION, DIALECT_LLVM, "")


# An instruction as LLVM prints it (two-space indent, a plain result name, a
# lower-case opcode, no trailing blanks): one regex finds what classify's string
# steps would, for most lines of a stage file. Anything else goes through classify.
_PLAIN_INSTR = re.compile(r"  (?:(%[-\w.$]+) = )?((?:tail |musttail |notail )?([a-z_]+)"
                          r"(?: [^\n]*\S)?)$")


# The head of such a line, for a stage file's parse: the rest of the line is only
# searched for its !dbg; the operands are read on first use (LazyInstruction).
_PLAIN_HEAD = re.compile(r"  (?:(%[-\w.$]+) = )?(?:tail |musttail |notail )?([a-z_]+)(?= |$)")


# (Above _plain_instr, whose decorator refers to it: mypy types decorated names in order.)
@never_raise(lambda fn, raw: (L_UNKNOWN,), pause_gc=False)  # odd text must never stop a parse
def _safe(fn: Callable[[str], tuple], raw: str) -> tuple:
    """``fn(raw)``: a line classified."""
    return fn(raw)


def classify_stage_line(raw: str) -> tuple:
    """``classify_direct(raw)``, except that a plain instruction's operands are left
    None (:class:`LlvmInstruction` reads them)."""
    m = _PLAIN_HEAD.match(raw)
    if m is not None and not raw[-1].isspace():
        res, opcode = m.groups()
        if opcode in _OPCODES:
            return (L_INSTR, opcode, (res,) if res else (), None, _dbg_ref(raw, m.end())[0],
                    UNKNOWN_LOCATION, DIALECT_LLVM, "")
    # (no plain head: classify_direct's regex, which needs one too, would fail as well)
    return _safe(classify, raw)


class LlvmInstruction(LazyInstruction):
    """An LLVM IR instruction of a stage file: operands read on first use."""

    __slots__ = ()

    @staticmethod
    def read_details(text: str) -> tuple:
        t = classify_direct(text)  # what the eager parse reads from the line
        return (t[3] if t[0] == L_INSTR else ()), "", ""


def classify_direct(raw: str) -> tuple:
    """What ``classify(raw)`` gives (never raising), faster on plain instruction lines."""
    m = _PLAIN_INSTR.match(raw)
    if m is not None:
        res, rest, opcode = m.groups()
        # (an opcode the regex reads differently from _instr, "tail" followed by a
        # comma..., is no opcode: classify judges those lines)
        if opcode in _OPCODES:
            return _plain_instr(raw, (res,) if res else (), rest, opcode)
    return _safe(classify, raw)


def _classify_plain(raw: str, results: tuple, rest: str, opcode: str) -> tuple:
    """What the guard falls back to for a plain instruction line: the full classifier."""
    return _safe(classify, raw)


@never_raise(_classify_plain, pause_gc=False)  # odd text: classify judges the line
def _plain_instr(raw: str, results: tuple, rest: str, opcode: str) -> tuple:
    """A plain instruction line's shape, read from its tail."""
    return _instr_tail(results, rest, opcode)


def _define(m: re.Match) -> tuple:
    linkage, name, rest = m.groups()
    if name.startswith('"'):
        name = name[1:-1]
    end = matching(rest, 0)
    args = []
    for piece in split_top(rest[1:end - 1]):
        words = piece.split()
        nm = words[-1] if words and words[-1].startswith("%") else ""
        args.append((nm, " ".join(words[:-1]) if nm else piece))
    tail = rest[end:]
    dbg = re.search(r"!dbg (![\w.]+)", tail)
    return (L_DEFINE, name, linkage.strip(), tuple(args), dbg.group(1) if dbg else "",
            tail.rstrip().endswith("{"), tail.strip().rstrip("{").strip())


def classify(raw: str) -> tuple:
    """Parse one line of LLVM IR into a tuple whose first element is its kind."""
    s = raw.strip()
    if not s:
        return (L_BLANK,)
    c = s[0]
    if c == ";":
        m = _LABEL_RE.match(s) if s.startswith("; <label>:") else None
        return (L_LABEL, m.group(1)) if m else (L_COMMENT,)
    if raw[0] in " \t":
        # the end and the cases of a multi-line switch; LLVM 19+ debug records
        if c == "]" or (c == "#" and s.startswith("#dbg_")) or (c == "i" and _SWITCH_CASE_RE.match(s)):
            return (L_MISC,)
        return _instr(s)
    if c == "}":
        return (L_CLOSE,)
    if c == "!":
        m = META_RE.match(s)
        if m is None:
            return (L_UNKNOWN,)
        ident, kind, rest = m.groups()
        fields = tuple(FIELD_RE.findall(rest)) if kind.startswith("!DI") else ()
        return (L_META, ident, kind, fields, s[len(ident) + 3:])
    if c == "d":
        m = _DEFINE_RE.match(s)
        if m:
            return _define(m)
        m = _DECLARE_RE.match(s)
        if m:
            return (L_DECLARE, m.group(1).strip('"'))
    if c == "@":
        m = _GLOBAL_RE.match(s)
        if m:
            return (L_GLOBAL, m.group(1).strip('"'), m.group(2))
    if s.startswith(_MISC_PREFIXES) or (c == "%" and " = type " in s):
        return (L_MISC,)
    if c == "#":
        m = _MIR_FUNC_RE.match(s)
        if m:
            return (L_MIR_FUNC, m.group(1).strip())
        if s.startswith("# End machine code for function"):
            return (L_MIR_END,)
        return (L_COMMENT,)
    m = _LABEL_RE.match(s)
    if m:
        return (L_LABEL, m.group(1).strip('"'))
    return (L_UNKNOWN,)


def classify_mir(raw: str) -> tuple:
    """Parse one line inside an MIR function (``# Machine code for function``)."""
    s = raw.strip()
    if not s:
        return (L_BLANK,)
    c = s[0]
    if c == ";":
        return (L_COMMENT,)
    if c == "#":
        if s.startswith("# End machine code for function"):
            return (L_MIR_END,)
        return (L_COMMENT,)
    if "bb." in s[:16]:
        m = _MIR_BLOCK_RE.match(s)
        if m:
            return (L_MIR_BLOCK, m.group(1))
    head = raw[0]
    if head != " " and head != "\t" and not head.isdigit():
        return (L_MIR_MISC,) if s.startswith(_MIR_MISC) else (L_UNKNOWN,)
    body = s
    if head.isdigit():  # "16B\t  %18:b64 = ..." (slot indexes)
        m = _MIR_INSTR_RE.match(raw)
        body = m.group(1).strip() if m else s
    if body.startswith(_MIR_MISC):
        return (L_MIR_MISC,)
    where = UNKNOWN_LOCATION
    i = body.rfind("; ")
    if i >= 0 and ":" in body[i:]:
        loc = _MIR_LOC_RE.search(body, i)
        if loc:
            where = _mir_location(loc.group(1))
            body = body[:loc.start()].rstrip()
    results: tuple = ()
    rest = body
    eq = body.find(" = ")
    if eq > 0 and '"' not in body[:eq]:
        results, rest = tuple(_MIR_VALUE_RE.findall(body[:eq])), body[eq + 3:]
    opcode = ""
    for word in rest.split(" "):
        if word[:1].isupper():  # flags (nuw, disjoint...) are lower case, opcodes not
            opcode = word.rstrip(",")
            break
    if not opcode:  # every machine instruction names one (COPY, INLINEASM, ADD64rr...)
        return (L_UNKNOWN,)
    j = rest.find("debug-location !")
    ref = rest[j + 15:].split(",", 1)[0].split(";", 1)[0].strip() if j >= 0 else ""
    if '"' in rest:
        rest = _STRING_RE.sub('""', rest)
    values = _MIR_VALUE_RE.findall(rest) if "$" in rest else _MIR_VREG_RE.findall(rest)
    # Form: without the slot index and location comment (both change when code moves).
    return (L_INSTR, opcode, results, tuple(values), ref, where, DIALECT_MIR, normalise_op_text(body))


@functools.lru_cache(maxsize=4096)
def _mir_location(comment: str) -> Location:
    """``k.py:13:24 @[ standard.py:3:4 ]`` -> Location (comments repeat a lot)."""
    return chain_location(_MIR_FRAME_RE.findall(comment))


# Value names and metadata numbers: what renumbering changes between snapshots.
def _with_form(shape: tuple, template: str) -> tuple:
    """An instruction's shape with its form, the same for every line of the template."""
    if shape[0] == L_INSTR:
        return shape[:7] + (normalise_op_text(template),)
    return shape


# Metadata definitions (``!7 = !DILocation(...)``) are unique: classified directly.
_TEMPLATER = Templater(r"(%|!(?=\d+(?![-\w.$])))([-\w.$]+)", ("%", "!"),
                       classify_direct, _with_form, unique="!")
_classify_new = _TEMPLATER.classify_new


# Value names and metadata numbers rewritten to one constant each (see op_forms_llvm).
_ERASERS = (("%", re.compile(r"%[-\w.$]+").sub, "%0"), ("!", re.compile(r"!\d+(?![-\w.$])").sub, "!0"))


def op_forms_llvm(text: str, cache: ParseCache | None = None) -> list[tuple[str, str]]:
    """``(op name, form)`` of every op :func:`parse_llvm` would give, in text order,
    without building the op tree or reading debug info (unknown lines left out).
    Like ``mlir_forms.op_forms_mlir``, it reads the text with its names erased."""
    memo = cache.llvm_forms if cache is not None else {}
    mir_memo = cache.mir_forms if cache is not None else {}
    out: list[tuple[str, str]] = []
    add = out.append
    in_fn = in_mir = False
    for line in erase_names(text, _ERASERS).split("\n"):
        if in_mir:
            t = mir_memo.get(line)
            if t is None:
                t = _safe(classify_mir, line)
                t = mir_memo[line] = (L_INSTR, t[1], t[7]) if t[0] == L_INSTR else t[:1]
        else:
            t = memo.get(line)
            if t is None:
                t = classify_direct(line)
                # keep what this needs: the kind, and for ops their name and form
                t = memo[line] = ((L_INSTR, t[1], normalise_op_text(line)) if t[0] == L_INSTR else
                                  (L_DEFINE, t[5]) if t[0] == L_DEFINE else
                                  (t[0], normalise_op_text(line)) if t[0] in (L_GLOBAL, L_DECLARE) else t[:1])
        k = t[0]
        if k == L_INSTR:
            add((t[1], t[2]))
            in_fn = True
        elif k == L_GLOBAL or k == L_DECLARE:
            add(("global" if k == L_GLOBAL else "declare", t[1]))
        elif k == L_LABEL or k == L_MIR_BLOCK:
            in_fn = True
        elif k == L_DEFINE:
            in_fn = t[1]
        elif k == L_MIR_FUNC:
            in_fn = in_mir = True
        elif (k == L_CLOSE or k == L_MIR_END) and in_fn:
            in_fn = in_mir = False
    return out


@parser(LLIR)
def parse_llvm(text: str, stage: str = LLIR, cache: ParseCache | None = None,
               metadata: dict[str, str] | None = None) -> Module:
    """Parse LLVM IR (or an MIR dump) into a :class:`Module`; never raises on input.

    ``metadata`` (``Module.loc_aliases`` of another parse) resolves ``!dbg`` refs when
    this text has no metadata of its own (function-level pass dumps).
    """
    # Templates pay off only across the many snapshots of a pass dump (see parse_mlir).
    templates = stage != LLIR  # a stage file (parse_as reads llir_ttgirloc as llir)
    ir_memo = cache.llvm if cache is not None else {}
    mir_memo = cache.mir if cache is not None else {}
    shapes = cache.llvm_shapes if cache is not None else {}
    memo, classifier = ir_memo, classify  # switched while inside an MIR function
    mod = Module(stage)
    all_ops, unknown, meta = mod.all_ops, mod.unknown, mod.loc_aliases
    add_op = all_ops.append
    new_instr = Instruction
    new_lazy = new_lazy_instruction
    nodes: dict[str, tuple] = {}
    fn: Function | None = None
    block: Block | None = None
    block_add = None
    total = 0
    lineno = 0
    head = _PLAIN_HEAD.match
    t: tuple | None
    # Every counted line is either understood or listed in ``unknown``.
    for lineno, raw in enumerate(text.split("\n"), 1):
        if classifier is classify and not templates:
            # A stage file: most lines are plain instructions of an open block, made
            # into ops right here (what classify_stage_line and the L_INSTR branch
            # below would do, without the tuple between them: a shared helper costs
            # this parse ~10%; the tests hold the result to the eager snapshot
            # parse); no memo, as a stage file repeats few lines and reading one
            # costs less.
            m = head(raw)
            if m is not None and block_add is not None and not raw[-1].isspace():
                res, opcode = m.groups()
                if opcode in _OPCODES:
                    i = raw.rfind(", !dbg !", m.end())  # _dbg_ref, inlined: ~5% of this parse
                    if i < 0:
                        ref = ""
                    else:
                        j = raw.find(",", i + 8)
                        ref = (raw[i + 7:j] if j >= 0 else raw[i + 7:]).strip()
                    op = new_lazy(LlvmInstruction, opcode, DIALECT_LLVM, (res,) if res else (), lineno, raw, fn, ref,
                                  lineno)  # operands read on first use
                    block_add(op)
                    add_op(op)
                    total += 1
                    continue
            t = classify_stage_line(raw)
        else:
            t = memo.get(raw)
            if t is None:
                t = _classify_new(raw, shapes) if classifier is classify else _safe(classifier, raw)
                memo[raw] = t
        k = t[0]
        if k <= L_COMMENT:
            continue
        total += 1
        if k == L_INSTR:
            if block_add is None:
                if fn is None:  # loop-pass dumps print bare blocks, outside any define
                    fn = _fragment(mod, lineno, raw)
                block = Block(None, (), [], lineno)
                fn.blocks.append(block)
                block_add = block.ops.append
            if t[3] is not None:
                op = new_instr(name=t[1], dialect=t[6], results=t[2], operands=t[3], types="", attributes="",
                               location=t[5], line=lineno, text=raw, parent=fn, loc_ref=t[4], end_line=lineno,
                               form=t[7])
            else:  # operands left unread (LlvmInstruction reads them on first use)
                op = new_lazy(LlvmInstruction, t[1], t[6], t[2], lineno, raw, fn, t[4], lineno, t[7])
                op.location = t[5]
            block_add(op)
            add_op(op)
        elif k == L_LABEL or k == L_MIR_BLOCK:
            if fn is None:
                fn = _fragment(mod, lineno, raw)
            block = Block(t[1], (), [], lineno)
            fn.blocks.append(block)
            block_add = block.ops.append
        elif k == L_META:
            meta[t[1]] = t[4]
            if t[3]:
                nodes[t[1]] = (t[2], t[3])
        elif k == L_DEFINE:
            fn = Function(name=t[1], kind="define", args=tuple(Value(n, ty) for n, ty in t[3]), line=lineno,
                          end_line=lineno, visibility=t[2], attributes=t[6], loc_ref=t[4], text=raw)
            mod.functions.append(fn)
            block = block_add = None
            if not t[5]:
                fn = None
        elif k == L_CLOSE or k == L_MIR_END:
            if fn is None:
                unknown.append((lineno, raw))
                continue
            fn.end_line = lineno
            fn = block = block_add = None
            memo, classifier = ir_memo, classify
        elif k == L_MIR_FUNC:
            fn = Function(name=t[1], kind=DIALECT_MIR, line=lineno, end_line=lineno, text=raw)
            mod.functions.append(fn)
            block = block_add = None
            memo, classifier = mir_memo, classify_mir
        elif k == L_GLOBAL or k == L_DECLARE:
            op = Instruction(name="global" if k == L_GLOBAL else "declare", dialect=DIALECT_LLVM, results=("@" + t[1],),
                             operands=(), types="", attributes="", location=UNKNOWN_LOCATION, line=lineno,
                             text=raw, end_line=lineno)
            mod.globals.append(op)
            add_op(op)
        elif k == L_MISC or k == L_MIR_MISC:
            pass
        else:
            unknown.append((lineno, raw))
            i = raw.find("!dbg !")  # keep the location of a line not understood
            ref = raw[i + 5:].replace(",", " ").split()[0] if i >= 0 else ""
            op = unknown_op(lineno, raw, parent=fn, loc_ref=ref, cls=Instruction)
            add_op(op)
            (block.ops if block is not None else mod.globals).append(op)
    if fn is not None:
        fn.end_line = lineno
    mod.total_lines, mod.understood_lines = total, total - len(unknown)
    meta_src = metadata if not nodes and metadata else meta
    resolve_locations(mod, debug_info(meta_src, nodes, cache))
    return mod


def _fragment(mod: Module, line: int, text: str) -> Function:
    """A nameless function holding instructions printed outside any ``define``."""
    fn = Function(name="", kind="fragment", line=line, end_line=line, text=text)
    mod.functions.append(fn)
    return fn
