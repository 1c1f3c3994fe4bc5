"""The lazy-op factories of the parsers' hot loops build what the dataclasses build."""

import dataclasses

import pytest

from irscope.ir.llvm import LlvmInstruction
from irscope.ir.mlir import MlirOp
from irscope.ir.model import UNKNOWN_LOCATION, new_lazy_instruction, new_lazy_op
from irscope.ir.ptx import PtxInstruction


def _slots(op, names):
    out = {}
    for n in names:
        try:
            out[n] = object.__getattribute__(op, n)
        except AttributeError:
            out[n] = "<unread>"
    return out


def _fields(cls):
    return [f.name for f in dataclasses.fields(cls)]


@pytest.mark.parametrize("cls", [LlvmInstruction, PtxInstruction])
def test_lazy_instruction_factory_equals_dataclass_init_and_del(cls):
    args = dict(name="add", dialect="llvm", results=("%3",), line=7, text="  %3 = add i32 %1, %2, !dbg !9",
                parent=None, loc_ref="!9", end_line=7, form="f", predicate="@%p1")
    fast = new_lazy_instruction(cls, **args)
    slow = cls(name="add", dialect="llvm", results=("%3",), operands=(), types="", attributes="",
               location=UNKNOWN_LOCATION, line=7, text=args["text"], regions=(), parent=None, loc_ref="!9",
               end_line=7, form="f", predicate="@%p1")
    del slow.operands
    names = _fields(cls)
    assert _slots(fast, names) == _slots(slow, names)
    assert _slots(fast, ["operands"]) == {"operands": "<unread>"}
    assert fast.operands == cls.read_details(args["text"])[0]  # read on first use


def test_lazy_mlir_op_factory_equals_dataclass_init_and_del():
    text = "%5 = arith.addi %3, %4 : tensor<128xi32, #blocked> loc(#loc7)"
    fast = new_lazy_op(MlirOp, "arith.addi", "arith", ("%5",), 4, text, None, "#loc7", 4, "")
    slow = MlirOp(name="arith.addi", dialect="arith", results=("%5",), operands=(), types="", attributes="",
                  location=UNKNOWN_LOCATION, line=4, text=text, regions=(), parent=None, loc_ref="#loc7",
                  end_line=4, form="")
    del slow.operands, slow.types, slow.attributes
    names = _fields(MlirOp)
    assert _slots(fast, names) == _slots(slow, names)
    assert (fast.operands, fast.types, fast.attributes) == (("%3", "%4"), "tensor<128xi32, #blocked>", "")


def test_factories_set_every_field_but_the_unread_ones():
    """A field added to Op or Instruction must be added to the factories too."""
    from irscope.ir.model import Instruction, Op

    op = new_lazy_op(MlirOp, "a.b", "a", (), 1, "a.b", None, "", 1)
    unset = {n for n, v in _slots(op, _fields(Op)).items() if v == "<unread>"}
    assert unset == {"operands", "types", "attributes"} == set(MlirOp.unread)
    ins = new_lazy_instruction(LlvmInstruction, "ret", "llvm", (), 1, "  ret void", None, "", 1)
    unset = {n for n, v in _slots(ins, _fields(Instruction)).items() if v == "<unread>"}
    assert unset == {"operands"} == set(LlvmInstruction.unread)


def test_a_lazy_op_reads_its_three_details_at_once():
    op = new_lazy_op(MlirOp, "tt.expand_dims", "tt", ("%4",), 1,
                     "    %4 = tt.expand_dims %3 {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32> loc(#loc9)",
                     None, "#loc9", 1)
    assert op.attributes == "{axis = 1 : i32}"  # any one of them...
    assert _slots(op, ["operands", "types"]) == {"operands": ("%3",), "types": "tensor<4xi32> -> tensor<4x1xi32>"}
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        op.nope
