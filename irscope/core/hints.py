"""Hints: sentences drawn from an :class:`~irscope.core.explain.Explanation`, each
naming what it rests on and a change to try.

    for h in irscope.open("k.irscope").capture("kernel").explain().hints:
        print(h.rule, h.line, h.text)
        for e in h.evidence:
            print("   ", e.text)

Each rule is a pure function over the explanation and the capture (for the IR the
facts point into). A rule says nothing unless its facts hold, and every hint cites its
evidence (:class:`Evidence`): an instruction or an attribute quoted from one line of a
stage's text, a remark, or a resource figure. The rules:

* ``narrow-access``: a global load or store (not an atomic) narrower than its layout
  allows (the PTX instruction against the layout's elements per thread), with the kernel arguments its
  address or mask rests on that Triton could not specialise (no ``tt.divisibility``;
  an integer argument multiplied into the address was not 1 at launch);
* ``vectorised-by-specialisation``: a vectorised access whose pointer arguments and
  integer offsets carry ``tt.divisibility = 16``;
* ``spills``: SASS ``LDL``/``STL``, set beside the registers the largest dot's
  accumulator needs per thread at the kernel's ``num_warps``;
* ``loop-not-pipelined``: a loop holding loads that the software pipeliner left
  alone, with Triton's remark, ``num_stages = 1``, or (NVIDIA) a loop with no dot
  and no ``tl.range(..., num_stages=N)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from irscope.compiler.stages import PTX, SASS, TTGIR, TTIR
from irscope.core.line_costs import PATH_TMA, GlobalAccess
from irscope.core.loops import DOT_OPS
from irscope.ir.model import Function, Module, Op
from irscope.ir.python_lines import same_file
from irscope.ir.types import TensorType
from irscope.ir.values import BlockArgument, OpResult

if TYPE_CHECKING:
    from irscope.core.capture import Capture
    from irscope.core.explain import Explanation, LineExplanation
    from irscope.core.loops import Loop

__all__ = ["Evidence", "Hint", "RULES", "hints_of"]

INSTRUCTION, ATTRIBUTE, REMARK, RESOURCE = "instruction", "attribute", "remark", "resource"
MAX_REGISTERS = 255
"""The most registers one thread may have (every NVIDIA target since sm_35)."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """One fact a hint rests on."""

    text: str
    """What the user reads (``ptx line 40: ld.global.b16 ...``)."""
    kind: str
    """``instruction``, ``attribute``, ``remark`` or ``resource``."""
    stage: str | None = None
    """The stage whose text holds it (None for a remark or a figure)."""
    stage_line: int | None = None
    """Its line in ``irscope cat --stage STAGE`` (1-based)."""
    quote: str | None = None
    """The exact text of that line it rests on."""

    def __str__(self) -> str:
        return self.text

    def to_json(self) -> dict:
        return {"text": self.text, "kind": self.kind, "stage": self.stage, "stage_line": self.stage_line,
                "quote": self.quote}


@dataclass(frozen=True, slots=True)
class Hint:
    """A sentence drawn from the facts, with what it rests on."""

    text: str
    evidence: tuple[Evidence, ...]
    """Never empty: a remark, an instruction, an attribute or a resource figure."""
    line: int | None
    """The Python line it is about (None: the whole kernel)."""
    rule: str
    """The rule that made it (module docstring)."""

    def to_json(self) -> dict:
        """The ``hints`` object of ``irscope explain --json``: ``evidence`` as strings,
        ``sources`` with where each one is."""
        return {"text": self.text, "evidence": [e.text for e in self.evidence], "line": self.line,
                "rule": self.rule, "sources": [e.to_json() for e in self.evidence]}


# -- quoting the IR ------------------------------------------------------------------

def _head(op: Op) -> str:
    """The op's first line without its location: a quote that occurs in the stage text."""
    first = op.text.strip().split("\n", 1)[0]
    return first.split(" loc(", 1)[0].rstrip()


def _op_evidence(stage: str, op: Op, limit: int = 140) -> Evidence:
    quote = _head(op)
    shown = quote if len(quote) <= limit else quote[:limit - 3] + "..."
    return Evidence(f"{stage} line {op.line}: {shown}", INSTRUCTION, stage, op.line, quote)


_DIV_RE = re.compile(r"tt\.divisibility\s*=\s*(\d+)")


@dataclass(frozen=True, slots=True)
class _Arg:
    name: str
    """Without the ``%``."""
    pointer: bool
    divisibility: int | None
    stage: str
    line: int
    quote: str
    """``%stride: i32`` or ``%a_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}``."""


def _args(fn: Function, stage: str, header: Function | None) -> dict[str, _Arg]:
    """The kernel's arguments and their specialisation, read from ``header`` (the TTIR
    function when there is one, the signature Triton specialised) else ``fn``."""
    src = header or fn
    text = src.text.split("\n", 1)[0]
    out: dict[str, _Arg] = {}
    for a in fn.args:
        at = text.find(a.name + ":")
        if at < 0:
            continue
        end = text.find(" loc(", at)
        quote = text[at:end if end > 0 else len(text)].rstrip()
        m = _DIV_RE.search(quote)
        out[a.name] = _Arg(a.name.lstrip("%"), "ptr<" in a.type, int(m.group(1)) if m else None,
                           TTIR if header is not None else stage, src.line, quote)
    return out


# Ops a value passes through unchanged in kind: the role of what feeds them is the
# role of what they feed.
_SHAPE_OPS = frozenset({"tt.splat", "tt.broadcast", "tt.expand_dims", "ttg.convert_layout", "arith.extsi",
                        "arith.extui", "arith.trunci", "tt.reshape", "tt.trans", "arith.index_cast",
                        "arith.andi"})  # andi: a mask combined with the pipeliner's predicate
_ROLES = {"arith.muli": "mul", "arith.addi": "add", "tt.addptr": "add", "arith.subi": "add", "arith.cmpi": "cmp",
          "tt.advance": "add", "tt.make_tensor_ptr": "add"}


def _slice_args(fn: Function, start: Op, operand: int) -> dict[str, tuple[str, Op]]:
    """Kernel arguments the value of ``start``'s operand ``operand`` is computed from:
    argument name -> (role, the op that uses it: ``mul``, ``add`` or ``cmp``, else
    ``other``), following loop-carried values to their initial and yielded values."""
    du = fn.def_use()
    out: dict[str, tuple[str, Op]] = {}
    seen: set[int] = set()
    ops = du.operands(start)
    if operand >= len(ops):
        return out
    stack: list[tuple[object, str, Op]] = [(ops[operand], "add", start)]
    while stack:
        v, role, user = stack.pop()
        if v is None or id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, OpResult) and v.op is not None:
            op = v.op
            name = op.name
            # past a non-affine op (a select, a division, a scalar predicate) a value no
            # longer decides the access's contiguity or alignment: it stays "other"
            r = role if name in _SHAPE_OPS or role == "other" else _ROLES.get(name, "other")
            if r == "cmp" and "tensor<" not in op.text:
                # a scalar comparison (the pipeliner's iteration predicate): one value for
                # the whole access, so it does not limit the vector width
                r = "other"
            for w in du.operands(op):
                stack.append((w, r, op))
        elif isinstance(v, BlockArgument):
            owner = v.owner
            if isinstance(owner, Function):
                out.setdefault(v.name, (role, user))
            elif isinstance(owner, Op) and owner.name == "scf.for" and v.index > 0:
                # iter_arg i: the loop's initial value (operand 3 + i) and the yielded one
                fops = du.operands(owner)
                if 3 + v.index - 1 < len(fops):
                    stack.append((fops[3 + v.index - 1], role, owner))
                block = v.block
                if block is not None and block.ops and block.ops[-1].name == "scf.yield":
                    yops = du.operands(block.ops[-1])
                    if v.index - 1 < len(yops):
                        stack.append((yops[v.index - 1], role, block.ops[-1]))
    return out


def _mask_operand(op: Op) -> int | None:
    if op.name == "tt.load" and len(op.operands) >= 2:
        return 1
    if op.name in ("tt.store", "ttg.async_copy_global_to_local") and len(op.operands) >= 3:
        return 2
    return None


# -- context shared by the rules -----------------------------------------------------

@dataclass
class _Context:
    cap: "Capture"
    ex: "Explanation"
    module: Module | None
    fn: Function | None
    args: dict[str, _Arg]
    ops_by_line: dict[int, Op]
    ptx: Module | None


def _context(cap: "Capture", ex: "Explanation") -> _Context:
    module = cap.stage(TTGIR).module if TTGIR in cap.stages else None
    fn = module.function(cap.kernel) if module is not None else None
    if fn is None and module is not None and module.functions:
        fn = module.functions[0]
    header = None
    if TTIR in cap.stages and fn is not None:
        header = cap.stage(TTIR).module.function(fn.name)
    args = _args(fn, TTGIR, header) if fn is not None else {}
    by_line = {op.line: op for op in module.ops()} if module is not None else {}
    ptx = cap.stage(PTX).module if PTX in cap.stages and not cap.stage(PTX).binary else None
    return _Context(cap, ex, module, fn, args, by_line, ptx)


def _ptx_evidence(ctx: _Context, ln: "LineExplanation", a: GlobalAccess) -> Evidence | None:
    if ctx.ptx is None:
        return None
    lines = set(ln.costs.statement_lines or (ln.line,))
    for op in ctx.ptx.ops():
        if op.name == a.opcode:
            fr = op.location.user_frame()
            if fr is not None and fr.line in lines and (ln.file is None or same_file(fr.file, ln.file)):
                return _op_evidence(PTX, op)
    return None


def _arg_evidence(arg: _Arg, why: str) -> Evidence:
    return Evidence(f"{arg.stage} line {arg.line}: {arg.quote} ({why})", ATTRIBUTE, arg.stage, arg.line, arg.quote)


def _remark_evidence(ln: "LineExplanation", words: tuple[str, ...]) -> list[Evidence]:
    return [Evidence(f"remark at line {r.line}: {r.text}", REMARK) for r in ln.remarks
            if any(w in r.text.lower() for w in words)]


def _names(items: list[str]) -> str:
    quoted = [f"`{n}`" for n in items]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


# -- the rules -----------------------------------------------------------------------

def _access_args(ctx: _Context, op: Op) -> tuple[dict[str, tuple[str, Op]], dict[str, tuple[str, Op]]]:
    """(address args, mask args) of a TTGIR access op."""
    if ctx.fn is None:
        return {}, {}
    addr = _slice_args(ctx.fn, op, 0)
    mask_at = _mask_operand(op)
    mask = _slice_args(ctx.fn, op, mask_at) if mask_at is not None else {}
    return addr, mask


def narrow_access(ctx: _Context) -> list[Hint]:
    """Global accesses narrower than their layout allows, and the arguments that keep
    Triton from proving them contiguous or aligned."""
    out: list[Hint] = []
    for ln in ctx.ex.lines:
        for a in ln.global_accesses:
            if not a.narrow or a.atomic or a.path == PATH_TMA or a.bits is None or a.max_bits is None:
                continue  # an atomic is issued per element (or packed pair) whatever the layout
            ins = _ptx_evidence(ctx, ln, a)
            op = ctx.ops_by_line.get(a.ttgir_line or -1)
            if ins is None or op is None:
                continue  # no instruction to cite: no hint
            evidence = [ins, _op_evidence(TTGIR, op)]
            causes: list[str] = []
            addr, mask = _access_args(ctx, op)
            for name, (role, user) in addr.items():
                arg = ctx.args.get(name)
                if arg is None:
                    continue
                if not arg.pointer and role == "mul":
                    if arg.divisibility is not None:
                        continue  # a multiple of 16: it may scale another dimension; not blamed
                    causes.append(f"the address multiplies by `{arg.name}`, which is neither known to be 1 nor a "
                                  f"multiple of 16 (Triton specialises an integer argument equal to 1 at launch, "
                                  f"and marks one divisible by 16)")
                    evidence += [_op_evidence(TTGIR, user), _arg_evidence(arg, "no tt.divisibility, not 1")]
                elif arg.divisibility is None and arg.pointer:
                    causes.append(f"`{arg.name}` is not known to be 16-byte aligned")
                    evidence.append(_arg_evidence(arg, "no tt.divisibility"))
                elif arg.divisibility is None and role == "add":
                    causes.append(f"the address adds `{arg.name}`, which is not known to be a multiple of 16")
                    evidence.append(_arg_evidence(arg, "no tt.divisibility"))
            for name, (role, user) in mask.items():
                arg = ctx.args.get(name)
                if arg is not None and not arg.pointer and arg.divisibility is None and role == "cmp":
                    causes.append(f"the mask compares with `{arg.name}`, which is not known to be a multiple of 16")
                    evidence += [_op_evidence(TTGIR, user), _arg_evidence(arg, "no tt.divisibility")]
            evidence += _remark_evidence(ln, ("vectoriz",))
            kind = "loads" if a.kind == "load" else "stores"
            text = (f"line {ln.line}: global {kind} are {a.bits} bits wide where {a.max_bits} would fit (the layout "
                    f"gives each thread {a.max_elements} {a.element_type or 'elements'} in a row).")
            if causes:
                text += " " + "; ".join(c[0].upper() + c[1:] for c in causes) + "."
                text += (" Try: a unit stride along the tile's contiguous dimension, and strides and sizes "
                         "padded to multiples of 16.")
            else:
                text += " Triton could not prove the addresses contiguous and aligned over that many elements."
            out.append(Hint(text, tuple(evidence), ln.line, "narrow-access"))
    return out


def vectorised_by_specialisation(ctx: _Context) -> list[Hint]:
    """Vectorised accesses whose pointer and offsets Triton knows are multiples of 16."""
    out: list[Hint] = []
    for ln in ctx.ex.lines:
        for a in ln.global_accesses:
            if a.narrow or a.atomic or a.path == PATH_TMA or a.bits is None or not a.elements or a.elements < 2:
                continue
            op = ctx.ops_by_line.get(a.ttgir_line or -1)
            ins = _ptx_evidence(ctx, ln, a)
            if op is None or ins is None:
                continue
            addr, mask = _access_args(ctx, op)
            pointers, ints = [], []
            evidence = [ins]
            found = {**mask, **addr}
            for name in [n for n in ctx.args if n in found]:
                role = found[name][0]
                arg = ctx.args[name]
                if arg.divisibility is None or arg.divisibility < 16:
                    continue
                if arg.pointer:
                    pointers.append(arg.name)
                elif role in ("mul", "add", "cmp"):
                    ints.append(arg.name)
                else:
                    continue
                evidence.append(_arg_evidence(arg, "specialised at launch"))
            if not pointers:
                continue  # without an aligned pointer the access is not vectorised by specialisation
            kind = "loads" if a.kind == "load" else "stores"
            said = f"`{pointers[0]}` is" if len(pointers) == 1 else f"{_names(pointers)} are"
            text = f"line {ln.line}: {said} specialised as 16-byte aligned"
            if ints:
                text += f" and {_names(ints)} as divisible by 16"
            text += (f" (tt.divisibility = 16), so these {kind} are vectorised ({a.bits} bits, {a.elements} "
                     f"elements). Keep them multiples of 16: a launch where one is not compiles a narrower variant.")
            out.append(Hint(text, tuple(evidence), ln.line, "vectorised-by-specialisation"))
    return out


def _largest_accumulator(ctx: _Context) -> tuple[Op, TensorType] | None:
    if ctx.module is None:
        return None
    best: tuple[Op, TensorType] | None = None
    for op in ctx.module.ops():
        if op.name not in DOT_OPS:
            continue
        try:
            results = op.signature(ctx.module.encodings).results
        except (ValueError, IndexError):
            continue
        t = results[0] if results else None
        if not isinstance(t, TensorType) or None in t.shape:
            continue
        if best is None or _elements(t) > _elements(best[1]):
            best = (op, t)
    return best


def _elements(t: TensorType) -> int:
    size = 1
    for n in t.shape:
        size *= int(n or 1)
    return size


def spills(ctx: _Context) -> list[Hint]:
    """Spill instructions, beside what the largest accumulator needs per thread."""
    ex, cap = ctx.ex, ctx.cap
    if not ex.has_sass or ex.total_spills <= 0:
        return []
    r = cap.resources
    evidence = [Evidence(f"{SASS}: {ex.total_spills} LDL/STL instructions", RESOURCE, SASS)]
    if r.registers is not None:
        evidence.append(Evidence(f"ptxas: {r.registers} registers per thread", RESOURCE))
    text = f"{ex.total_spills} spill instructions"
    acc = _largest_accumulator(ctx)
    warps = r.num_warps or cap.compile_option("num_warps")
    if acc is not None and warps:
        op, t = acc
        bits = getattr(t.element, "bits", None) or 32
        regs = _elements(t) * bits // 32 // (int(warps) * 32)
        shape = "x".join(str(n) for n in t.shape)
        evidence.append(_op_evidence(TTGIR, op))
        text += (f": the {shape} {t.element} accumulator needs {regs} registers per thread at num_warps={warps}"
                 f" ({'more than' if regs > MAX_REGISTERS else 'out of'} the {MAX_REGISTERS} a thread may have).")
        text += " Try: more warps (num_warps=8) or a smaller tile."
    else:
        text += f" (the kernel uses {r.registers} registers per thread)." if r.registers else "."
        text += " Try: a smaller block, or more warps to spread it."
    return [Hint(text, tuple(evidence), None, "spills")]


def _loop_op(ctx: _Context, lp: "Loop") -> Op | None:
    op = ctx.ops_by_line.get(lp.ttgir_line)
    return op if op is not None and op.name == "scf.for" else None


def loop_not_pipelined(ctx: _Context) -> list[Hint]:
    """Loops with loads the software pipeliner left alone, and why where it is known."""
    out: list[Hint] = []
    cap = ctx.cap
    for lp in ctx.ex.loops:
        if lp.pipelined:
            continue
        op = _loop_op(ctx, lp)
        if op is None:
            continue
        where = f"the loop at line {lp.line}" if lp.line is not None else f"the loop at ttgir line {lp.ttgir_line}"
        evidence = [_op_evidence(TTGIR, op, 100)]
        if lp.remark:
            evidence.append(Evidence(f"remark: {lp.remark}", REMARK))
            text = f"{where} was not pipelined: {lp.remark}"
        elif lp.requested_stages is not None and lp.requested_stages <= 1:
            evidence.append(Evidence(f"num_stages = {lp.requested_stages}", RESOURCE))
            text = f"{where} was not pipelined: num_stages={lp.requested_stages} turns the pipeliner off. Try num_stages=3."
        elif cap.target.startswith("sm_") and not any(o.name in DOT_OPS for o in op.walk()) \
                and "tt.num_stages" not in op.attribute_values():
            # Triton's AssignLatencies pipelines the loads of a loop only when they feed a
            # dot, unless the loop carries tt.num_stages (pipelineWithoutDot)
            evidence.append(Evidence(f"{lp.loads} load(s) and no dot in the loop, no tt.num_stages attribute",
                                     RESOURCE))
            text = (f"{where} was not pipelined: Triton pipelines a loop without a dot only when asked. Try "
                    f"`for ... in tl.range(..., num_stages=3)`.")
        else:
            continue  # no reason to give
        out.append(Hint(text, tuple(evidence), lp.line, "loop-not-pipelined"))
    return out


RULES = (narrow_access, vectorised_by_specialisation, spills, loop_not_pipelined)
"""Every rule, in the order their hints are listed."""


def hints_of(cap: "Capture", ex: "Explanation") -> tuple[Hint, ...]:
    """Every hint the rules draw from ``ex`` (the explanation of ``cap``)."""
    ctx = _context(cap, ex)
    out: list[Hint] = []
    for rule in RULES:
        out.extend(rule(ctx))
    return tuple(out)
