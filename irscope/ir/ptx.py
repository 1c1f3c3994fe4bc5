"""Parser for PTX as LLVM's NVPTX back end prints it for Triton.

``.loc F L C`` sets the location of the instructions that follow; the ``.file F
"path"`` table comes after the functions, so locations are resolved at the end.
Inlining shows in the comment LLVM writes after ``.loc``
(``// standard.py:263:15 @[ kernels.py:67:19 ]``, base names; Triton 3.3-3.8) or as
``inlined_at F L C`` (3.9); both become caller frames. Triton 3.2's PTX has neither.
"""

from __future__ import annotations

import re

from irscope.text_guard import never_raise

from .parse_guard import parser
from .bracket_scan import LABEL_RE as _LABEL_RE
from .bracket_scan import split_top
from irscope.compiler.stages import PTX

from .model import DIALECT_PTX
from .model import (new_lazy_instruction, unknown_op, UNKNOWN_LOCATION, Block, Frame, Function, Instruction,
                    LazyInstruction, Location, Module, ParseCache, Value)

(P_BLANK, P_COMMENT, P_DIRECTIVE, P_FUNC, P_PARAM, P_PCLOSE, P_OPEN, P_CLOSE, P_LOC,
 P_FILE, P_LABEL, P_INSTR, P_SECTION, P_DATA, P_SEMI, P_UNKNOWN, P_REG, P_POPEN) = range(18)

# .visible .entry helper_kernel(      /   .extern .func (.param .b32 func_retval0) vprintf
_FUNC_RE = re.compile(r"((?:\.(?:visible|extern|weak|global)\s+)*)\.(entry|func)\s+"
                      r"(?:\(.*?\)\s*)?([\w$.]+)\s*(\(.*)?$")
# .param .u64 .ptr .global .align 1 helper_kernel_param_0,
_PARAM_RE = re.compile(r"\.param\s+(.*?)\s*([\w$]+)(\[\d*\])?\s*,?$")
# .loc	1 62 24   /  .loc 1 5 3, function_name $L__info_string0, inlined_at 2 10 5
_LOC_RE = re.compile(r"\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:\s*,\s*function_name\s+[\w$.]+)?"
                     r"(?:\s*,\s*inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?\s*(?://\s*(.*))?$")
# .file	1 "/abs/k.py"   /   .file 1 "/abs" "k.py"
_FILE_RE = re.compile(r'\.file\s+(\d+)\s+"((?:[^"\\]|\\.)*)"(?:\s+"((?:[^"\\]|\\.)*)")?')
# standard.py:263:15 @[ kernels.py:67:19 ]
_FRAME_RE = re.compile(r"([^\s@\[\]]+):(\d+):(\d+)")
# Base names (before the first '.') of the PTX instructions; a line whose opcode is
# none of these is not understood.
_OPCODES = frozenset("""
abs activemask add addc alloca and applypriority atom bar barrier bfe bfi bfind bmsk bra
brev brkpt brx call clusterlaunchcontrol clz cnot copysign cos cp createpolicy cvt cvta
discard div dp2a dp4a elect ex2 exit fence fma fns getctarank griddepcontrol isspacep
istypeof ld ldmatrix ldu lg2 lop3 mad mad24 madc mapa match max mbarrier membar min mma
mov movmatrix mul mul24 multimem nanosleep neg not or pmevent popc prefetch prefetchu prmt
rcp red redux rem ret rsqrt sad selp set setmaxnreg setp shf shfl shl shr sin slct sqrt
st stackrestore stacksave stmatrix sub subc suld suq sured sust szext tanh tcgen05
tensormap testp tex tld4 trap txq vabsdiff vabsdiff2 vabsdiff4 vadd vadd2 vadd4 vavrg2
vavrg4 vmad vmax vmax2 vmax4 vmin vmin2 vmin4 vote vset vset2 vset4 vshl vshr vsub vsub2
vsub4 wgmma wmma xor""".split())
_DATA_PREFIXES = (".b8", ".b16", ".b32", ".b64", ".quad", ".byte", ".word", ".u8", ".u32",
                  ".u64")
_BODY_DIRECTIVES = (".reg", ".shared", ".local", ".pragma", ".param", ".const", ".maxnreg",
                    ".maxntid", ".reqntid", ".minnctapersm", ".maxnctapersm",
                    ".reqnctapercluster", ".explicitcluster", ".maxclusterrank",
                    ".noreturn", ".alias", ".global")
# Other directives, by their first word (anything else starting with '.' is unknown).
_DIRECTIVES = frozenset(""".version .target .address_size .extern .visible .weak .common
.callprototype .tex .texref .surfref .samplerref .abi_preserve .abi_preserve_control
.blocksareclusters""".split())


def classify(raw: str) -> tuple:
    """Parse one PTX line into a tuple whose first element is its kind."""
    s = raw.strip()
    if not s:
        return (P_BLANK,)
    c = s[0]
    if c == "/" and (s.startswith("//") or s.startswith("/*")):
        return (P_COMMENT,)
    if c == "{":
        return (P_OPEN,) if s == "{" or s.startswith("{ ") and "//" in s else _instr(s)
    if c == "}":
        return (P_CLOSE,)
    if c == ")":
        return (P_PCLOSE, s.rstrip().endswith(";"))
    if c == ";":
        return (P_SEMI,)
    if s == "(":
        return (P_POPEN,)
    if c == ".":
        if s.startswith(".loc"):
            m = _LOC_RE.match(s)
            if m:
                f, ln, col, f2, l2, c2, comment = m.groups()
                callers = tuple((fr, int(a), int(b))
                                for fr, a, b in _FRAME_RE.findall(comment or ""))[1:]
                inl = (int(f2), int(l2), int(c2)) if f2 else None
                key = f"{f} {ln} {col}"
                if inl:
                    key += " inlined_at {} {} {}".format(*inl)
                if callers:
                    key += " // " + comment.strip()
                return (P_LOC, int(f), int(ln), int(col), callers, inl, key)
            return (P_UNKNOWN,)
        if s.startswith(".file"):
            m = _FILE_RE.match(s)
            if m:
                path = m.group(2) if m.group(3) is None else f"{m.group(2)}/{m.group(3)}"
                return (P_FILE, int(m.group(1)), path)
            return (P_UNKNOWN,)
        if s.startswith(".section"):
            words = s.split()
            return (P_SECTION, words[1] if len(words) > 1 else "", s.endswith("{"),
                    s.endswith("}"))
        if s.startswith(_DATA_PREFIXES):
            return (P_DATA,)
        m = _FUNC_RE.match(s)
        if m:
            vis, kind, name, rest = m.groups()
            rest = rest or ""
            closed = "(" in rest and ")" in rest  # all parameters on this line
            return (P_FUNC, name, "." + kind, vis.strip(), _params(rest) if closed else (),
                    closed, s.endswith(";"))
        if s.startswith(".param"):
            m = _PARAM_RE.match(s)
            return (P_PARAM, m.group(2), m.group(1)) if m else (P_PARAM, "", s)
        if s.startswith(_BODY_DIRECTIVES):
            return (P_REG,)
        if s.split(None, 1)[0] in _DIRECTIVES:
            return (P_DIRECTIVE, s.split("//")[0].strip())
        return (P_UNKNOWN,)
    if c == "$" or ":" in s:
        m = _LABEL_RE.match(s)
        if m:
            return (P_LABEL, m.group(1))
    return _instr(s)


def _params(rest: str) -> tuple:
    """(name, type) of each ``.param`` in ``(.param .u64 a, .param .u32 b)``."""
    out = []
    for piece in split_top(rest[1:rest.rfind(")")]):
        words = piece.split()
        if words and words[0] == ".param":
            out.append((words[-1], " ".join(words[1:-1])))
    return tuple(out)


# @%p1 ld.global.b32 { %r1 }, [ %rd1 + 0 ];   /   ret;
_PRED_RE = re.compile(r"@!?%?\w+\s")
_OPCODE_RE = re.compile(r"[a-z_][\w.:]*")


def _instr(s: str) -> tuple:
    """An instruction line (stripped): ``@%p1 ld.global.b32 {%r1}, [%rd1];  // c``.
    String operations, not one regex: this runs for every line of every PTX text."""
    pred = ""
    body = s
    if s[0] == "@":
        m = _PRED_RE.match(s)
        if m is None:
            return (P_UNKNOWN,)
        pred, body = s[:m.end()].strip(), s[m.end():].lstrip()
    i = body.find("//")
    if i >= 0:
        body = body[:i]
    body = body.rstrip()
    semi = body.endswith(";")
    if semi:
        body = body[:-1].rstrip()
    parts = body.split(None, 1)
    if not parts:
        return (P_UNKNOWN,)
    opcode = parts[0]
    if _OPCODE_RE.fullmatch(opcode) is None or opcode.split(".", 1)[0] not in _OPCODES:
        return (P_UNKNOWN,)
    operands = tuple(split_top(parts[1])) if len(parts) > 1 else ()
    return (P_INSTR, opcode, pred, operands, semi)


# A complete instruction line as LLVM prints it: indent, predicate, opcode, operands
# and ';' (no comment, no trailing blanks). A stage file's parse reads these by one
# regex and leaves the operands to be split on first use (LazyInstruction).
_PLAIN_INSTR = re.compile(r"[ \t]+(?:(@!?%?\w+)[ \t]+)?([a-z_][\w.:]*)(?=[ \t;])[^;/\n]*;$")


def classify_stage_line(raw: str) -> tuple:
    """``classify(raw)`` (never raising), except that a plain instruction's operands
    are left None; :class:`PtxInstruction` reads them."""
    m = _PLAIN_INSTR.match(raw)
    # (a ':' outside '::' could make the line a label: classify judges those)
    if m is not None and (":" not in raw or raw.count(":") == 2 * raw.count("::")):
        opcode = m.group(2)
        if opcode.split(".", 1)[0] in _OPCODES:
            return (P_INSTR, opcode, m.group(1) or "", None, True)
    return _safe(raw)


class PtxInstruction(LazyInstruction):
    """A PTX instruction: operands split on first use."""

    __slots__ = ()

    @staticmethod
    def read_details(text: str) -> tuple:
        t = _safe(text)  # what the eager parse reads from the line
        return (t[3] if t[0] == P_INSTR else ()), "", ""


@never_raise(lambda raw: (P_UNKNOWN,), pause_gc=False)  # odd text must never stop a parse
def _safe(raw: str) -> tuple:
    """``classify(raw)``."""
    return classify(raw)


@parser(PTX)
def parse_ptx(text: str, stage: str = PTX, cache: ParseCache | None = None) -> Module:
    """Parse PTX into a :class:`Module` (functions, labels as blocks, instructions
    with their ``.loc`` locations); never raises on input text."""
    memo = cache.ptx if cache is not None else {}
    mod = Module(stage)
    all_ops, unknown = mod.all_ops, mod.unknown
    files: dict[int, str] = {}
    locs: dict[str, tuple] = {}
    fn: Function | None = None
    block: Block | None = None
    in_params = False
    depth = 0  # brace depth inside a function body
    section = 0  # brace depth inside a .section
    section_wait = False  # a .section line whose '{' comes on the next line
    loc_key = ""
    pending: Instruction | None = None  # an instruction continued on the next lines
    header: list[str] = []
    total = understood = 0
    lineno = 0
    for raw in text.split("\n"):
        lineno += 1
        t = memo.get(raw)
        if t is None:
            t = classify_stage_line(raw)
            memo[raw] = t
        k = t[0]
        if k == P_BLANK or k == P_COMMENT:
            continue
        total += 1
        if pending is not None:
            pending.text += "\n" + raw
            pending.end_line = lineno
            understood += 1
            if raw.split("//")[0].rstrip().endswith(";"):
                pending = None
            continue
        if section_wait:
            section_wait = False
            if k == P_OPEN:
                section = 1
                understood += 1
                continue
        if section:
            understood += 1
            if k == P_OPEN:
                section += 1
            elif k == P_CLOSE:
                section -= 1
            elif k == P_FILE:
                files[t[1]] = t[2]
            continue
        if k == P_INSTR and depth:
            if block is None:
                block = Block(None, (), [], lineno)
                fn.blocks.append(block)  # type: ignore[union-attr]  # depth > 0 only inside a function
            if t[3] is not None:
                op = Instruction(name=t[1], dialect=DIALECT_PTX, results=(), operands=t[3], types="", attributes="",
                                 location=UNKNOWN_LOCATION, line=lineno, text=raw, parent=fn, loc_ref=loc_key,
                                 end_line=lineno, predicate=t[2])
            else:  # operands left unread (PtxInstruction reads them on first use)
                op = new_lazy_instruction(PtxInstruction, t[1], DIALECT_PTX, (), lineno, raw, fn, loc_key, lineno, "",
                                          t[2])
            block.ops.append(op)
            all_ops.append(op)
            if not t[4]:
                pending = op
            understood += 1
        elif k == P_LOC:
            loc_key = t[6]
            locs[loc_key] = t
            understood += 1
        elif k == P_LABEL and depth:
            block = Block(t[1], (), [], lineno)
            fn.blocks.append(block)  # type: ignore[union-attr]  # depth > 0 only inside a function
            understood += 1
        elif k == P_OPEN:
            if fn is not None:
                depth += 1
                understood += 1
            else:
                unknown.append((lineno, raw))
        elif k == P_CLOSE:
            if depth:
                depth -= 1
                if depth == 0:
                    fn.end_line = lineno  # type: ignore[union-attr]  # depth > 0 only inside a function
                    fn, block, loc_key = None, None, ""
                understood += 1
            else:
                unknown.append((lineno, raw))
        elif k == P_FUNC:
            if t[6]:  # a declaration: .extern .func ... ;
                _declare(mod, t[1], lineno, raw)
            else:
                fn = Function(name=t[1], kind=t[2], args=tuple(Value(n, ty) for n, ty in t[4]), line=lineno,
                              end_line=lineno, visibility=t[3], text=raw)
                mod.functions.append(fn)
                block, depth, loc_key = None, 0, ""
                in_params = not t[5]
            understood += 1
        elif k == P_PARAM and fn is not None and in_params:
            fn.args += (Value(t[1], t[2]),)
            understood += 1
        elif k == P_PCLOSE or k == P_SEMI:
            in_params = False
            if k == P_SEMI or t[1]:
                if fn is not None and not depth:  # the header was a declaration
                    mod.functions.pop()
                    _declare(mod, fn.name, fn.line, fn.text)
                    fn = None
            understood += 1
        elif k == P_FILE:
            files[t[1]] = t[2]
            understood += 1
        elif k == P_SECTION:
            section = 1 if t[2] else 0
            section_wait = not t[2] and not t[3]
            understood += 1
        elif k == P_POPEN and fn is not None and in_params:
            understood += 1
        elif k == P_DIRECTIVE or k == P_REG or k == P_DATA:
            if not depth and k == P_DIRECTIVE:
                header.append(t[1])
            understood += 1
        else:
            unknown.append((lineno, raw))
            op = unknown_op(lineno, raw, parent=fn, loc_ref=loc_key if depth else "", cls=Instruction)
            all_ops.append(op)
            (block.ops if block is not None else mod.globals).append(op)
    if fn is not None:
        fn.end_line = lineno
    mod.total_lines, mod.understood_lines = total, understood
    mod.attributes = "; ".join(h for h in header if h.startswith((".version", ".target",
                                                                   ".address_size")))
    mod.loc_aliases.update({str(n): p for n, p in files.items()})
    _resolve(mod, files, locs)
    return mod


def _declare(mod: Module, name: str, line: int, text: str) -> None:
    op = Instruction(name="declare", dialect=DIALECT_PTX, results=(name,), operands=(), types="", attributes="",
                     location=UNKNOWN_LOCATION, line=line, text=text, end_line=line)
    mod.globals.append(op)
    mod.all_ops.append(op)


def _resolve(mod: Module, files: dict[int, str], locs: dict[str, tuple]) -> None:
    by_base: dict[str, str] = {}
    for path in files.values():
        base = path.rsplit("/", 1)[-1]
        by_base[base] = path if base not in by_base else ""  # ambiguous -> keep base

    def full(name: str) -> str:
        return by_base.get(name) or name

    # `inlined_at` names one call site; that site's own .loc line (when it was
    # inlined too) names the next one.
    outer = {(t[1], t[2], t[3]): t[5] for t in locs.values() if t[5]}
    resolved: dict[str, Location] = {}
    for key, (_, f, ln, col, callers, inl, _k) in locs.items():
        frames = [Frame(files.get(f, str(f)), ln, col)]
        if callers:
            frames.extend(Frame(full(n), a, b) for n, a, b in callers)
        else:
            seen = set()
            while inl and inl not in seen and len(frames) < 64:
                seen.add(inl)
                frames.append(Frame(files.get(inl[0], str(inl[0])), inl[1], inl[2]))
                inl = outer.get(inl)
        kind = "callsite" if len(frames) > 1 else "file"
        resolved[key] = Location(tuple(frames), kind) if ln else UNKNOWN_LOCATION
    for op in mod.all_ops:
        if op.loc_ref:
            op.location = resolved.get(op.loc_ref, UNKNOWN_LOCATION)


# .shared .align 16 .b8 smem[4096];   (static: sized in the PTX)
# .extern .shared .align 16 .b8 global_smem[];   (dynamic: sized at launch)
_PTX_SHARED = re.compile(r"^\s*(?P<extern>\.extern\s+)?\.shared\s+(?:\.align\s+\d+\s+)?\.(?P<ty>[busf])(?P<bits>\d+)"
                         r"\s+[\w$]+(?P<dims>(?:\[\d*\])*)\s*;", re.M)


def static_shared_bytes(ptx: str) -> int:
    """Bytes of the statically sized ``.shared`` arrays a PTX module declares."""
    total = 0
    for m in _PTX_SHARED.finditer(ptx):
        if m["extern"]:
            continue
        n = 1
        for dim in re.findall(r"\[(\d*)\]", m["dims"]):
            n *= int(dim) if dim else 0
        total += n * int(m["bits"]) // 8
    return total
