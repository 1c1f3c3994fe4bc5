"""Is a profile's SASS the capture's SASS? Compared instruction by instruction, by offset.

A profile is charged to a capture through instruction offsets, so it must come
from the same code: another variant, another Triton or another compile would put
samples on the wrong lines without a word. Nsight Compute prints an instruction
as ``nvdisasm`` does, but for three things, which are normalised away here:

- no ``;`` and no ``.reuse`` operand flags, and a predicate padded to 6 columns;
- branch targets (BRA, BSSY, CALL...) are absolute device addresses where the
  capture has a label (`` `(.L_x_1) ``): both become the target's offset. A label
  that is no instruction of the function (the function's own symbol, which a
  noinline helper's ``RET.REL.NODEC R4 `(kernel)`` names) takes any number;
- LDGSTS lists its shared-memory destination last, the capture first: the operands
  of an instruction that addresses memory (an operand in ``[...]``: LDGSTS, and the
  other copies and loads that ncu may print in its own order) are compared as a
  multiset. Register and immediate operands of every other instruction keep their
  order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from irscope.ir.bracket_scan import split_top
from irscope.ir.model import Instruction, Module
from irscope.ir.sass import parse_sass

from .model import SampledInstruction

# "@!P0  BRA 0x7f02a52b99c0" -> predicate, opcode, operands
_NCU_RE = re.compile(r"^\s*(@!?U?P[T\d]+)?\s*([A-Z][A-Za-z0-9_.]*)\s*(.*?)\s*;?\s*$")
_LABEL_OPERAND_RE = re.compile(r"^`\((.+)\)$")
_HEX_RE = re.compile(r"^0x([0-9a-fA-F]+)$")
# "R4 `(kernel)" (nvdisasm) / "R4 0x7f02a52b9e60": a register and a target with no comma between.
_REG_TARGET_RE = re.compile(r"^(\S+)\s+(`\(.+\)|0x[0-9a-fA-F]+)$")
# A capture label operand that names no instruction of the function: any number matches it.
_ANY_TARGET = "<any target>"
_Key = tuple[str, str, tuple[str, ...]]
"""An instruction as compared: predicate, opcode, operands."""


@dataclass(frozen=True)
class SassInstr:
    """One instruction in compared form: offset, predicate, opcode, operands."""

    offset: int
    predicate: str
    opcode: str
    operands: tuple[str, ...]

    def text(self) -> str:
        """The instruction as one readable line (the predicate, opcode and operands)."""
        ops = ", ".join(self.operands)
        return " ".join(p for p in (self.predicate, self.opcode, ops) if p)


@dataclass(frozen=True)
class CaptureSass:
    """A capture's SASS for one kernel: its instructions and label offsets."""

    kernel: str
    instructions: tuple[SassInstr, ...]
    labels: dict[str, int]

    @property
    def size(self) -> int:
        """Bytes from the entry to the end of the last instruction."""
        return self.instructions[-1].offset + 16 if self.instructions else 0


def capture_sass(sass: str | Module, kernel: str) -> CaptureSass:
    """The instructions of ``kernel``'s function in a capture's ``sass`` stage (its
    ``nvdisasm -g -c`` text, or that parsed); the first function when none has that name."""
    module = parse_sass(sass) if isinstance(sass, str) else sass
    functions = getattr(module, "functions", [])
    fn = next((f for f in functions if f.name == kernel), None) or next((f for f in functions if f.blocks), None)
    if fn is None:
        return CaptureSass(kernel, (), {})
    out: list[SassInstr] = []
    labels: dict[str, int] = {}
    pending: list[str] = []  # labels waiting for their first instruction
    for block in fn.blocks:
        if block.label:
            pending.append(block.label)
        for op in block.ops:
            if not isinstance(op, Instruction) or op.offset is None:
                continue
            for name in pending:
                labels[name] = op.offset
            pending = []
            out.append(SassInstr(op.offset, op.predicate or "", op.name, _operands(op.operands)))
    end = out[-1].offset + 16 if out else 0
    for name in pending:
        labels[name] = end  # a label after the last instruction: the function's end
    return CaptureSass(kernel, tuple(out), labels)


def profile_sass(instructions: Sequence[SampledInstruction]) -> tuple[SassInstr, ...]:
    """A profile's instructions in compared form (unparseable text kept whole as the opcode)."""
    out = []
    for ins in instructions:
        m = _NCU_RE.match(ins.text)
        if m is None:
            out.append(SassInstr(ins.offset, "", ins.text.strip(), ()))
            continue
        pred, opcode, ops = m.groups()
        out.append(SassInstr(ins.offset, pred or "", opcode, _operands(split_top(ops)) if ops else ()))
    return tuple(out)


def sass_mismatch(kernel: str, profile: Sequence[SampledInstruction], capture: CaptureSass,
                  base_address: int | None = None) -> str | None:
    """None when the profile's instructions are the capture's, offset by offset; else
    ONE line saying where: the kernel, the offset, both texts.

    ``base_address`` is the device address of the profile's first instruction (ncu's
    branch targets are absolute); without it, branch targets are not compared."""
    if not capture.instructions:
        return f"{kernel}: the capture has no SASS to compare the profile with"
    theirs = profile_sass(profile)
    ours = {i.offset: i for i in capture.instructions}
    for ins in theirs:
        mine = ours.get(ins.offset)
        if mine is None:
            return (f"{kernel}: at offset 0x{ins.offset:04x} the profile has `{ins.text()}`, the capture "
                    f"has no instruction (its SASS ends at 0x{capture.size:04x})")
        if not _same(_profile_key(ins, base_address, capture.size),
                     _capture_key(mine, capture.labels, base_address is None)):
            return (f"{kernel}: SASS differs at offset 0x{ins.offset:04x}: profile `{ins.text()}`, "
                    f"capture `{mine.text()}`")
    if len(theirs) < len(capture.instructions):
        seen = {i.offset for i in theirs}
        first = next(i for i in capture.instructions if i.offset not in seen)
        return (f"{kernel}: at offset 0x{first.offset:04x} the capture has `{first.text()}`, the profile has "
                f"no instruction ({len(theirs)} instructions against the capture's {len(capture.instructions)})")
    return None


def _clean(operand: str) -> str:
    """An operand without ``.reuse`` flags or surrounding space."""
    return operand.replace(".reuse", "").strip()


def _operands(raw: Sequence[str]) -> tuple[str, ...]:
    """Cleaned operands, a register and its target written without a comma
    (``RET.REL.NODEC R4 `(kernel)``) as two."""
    out: list[str] = []
    for o in raw:
        o = _clean(o)
        m = _REG_TARGET_RE.match(o)
        out.extend(m.groups() if m else (o,))
    return tuple(out)


def _capture_key(ins: SassInstr, labels: dict[str, int], masked: bool) -> _Key:
    """What must be equal, capture side: label operands become their offsets
    (``<target>`` when ``masked``: the profile's cannot be placed; :data:`_ANY_TARGET`
    for a label outside the function)."""
    ops = []
    for o in ins.operands:
        m = _LABEL_OPERAND_RE.match(o)
        if m:
            target = labels.get(m.group(1))
            o = "<target>" if masked else (f"<target {target:#x}>" if target is not None else _ANY_TARGET)
        ops.append(o)
    return _ordered(ins, ops)


def _profile_key(ins: SassInstr, base: int | None, size: int) -> _Key:
    """What must be equal, profile side: absolute addresses inside the function become
    offsets from ``base`` (``<target>`` without a base: any device-sized address)."""
    ops = []
    for o in ins.operands:
        h = _HEX_RE.match(o)
        if h:
            value = int(h.group(1), 16)
            if base is None:
                if len(h.group(1)) >= 9:  # a device address, not an immediate
                    o = "<target>"
            elif base <= value <= base + size:
                o = f"<target {value - base:#x}>"
        ops.append(o)
    return _ordered(ins, ops)


def _ordered(ins: SassInstr, ops: list[str]) -> _Key:
    """Predicate, opcode, operands (sorted for an instruction that addresses memory,
    whose operands ncu may print in another order)."""
    if any("[" in o for o in ops):
        return (ins.predicate, ins.opcode, tuple(sorted(ops)))
    return (ins.predicate, ins.opcode, tuple(ops))


def _same(profile: _Key, capture: _Key) -> bool:
    """Whether two keys are the same instruction: equal, or equal but where the capture
    has :data:`_ANY_TARGET` and the profile a number (a target outside the function)."""
    if profile == capture:
        return True
    if profile[:2] != capture[:2]:
        return False
    theirs, mine = profile[2], capture[2]
    wild = (_ANY_TARGET, "<target>")  # "<target>": a label where the profile's addresses cannot be placed
    return any(b in wild for b in mine) and len(theirs) == len(mine) and all(
        a == b or (b in wild and (_HEX_RE.match(a) is not None or a.startswith("<target")))
        for a, b in zip(theirs, mine))
