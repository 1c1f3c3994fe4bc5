"""The lazy-op factories of the parsers' hot loops build what the dataclasses build."""

import dataclasses
from types import MemberDescriptorType

import pytest

from irscope.ir.llvm import LlvmInstruction
from irscope.ir.mlir import MlirOp
from irscope.ir.model import UNKNOWN_LOCATION, new_lazy_instruction, new_lazy_op
from irscope.ir.ptx import PtxInstruction


def _slots(op, names):
    """The slots themselves (a lazy op's details are properties over them)."""
    out = {}
    for n in names:
        own = "_" + n if n in getattr(op, "unread", ()) else n  # a lazy detail's own slot
        slot = next(k.__dict__[own] for k in type(op).__mro__
                    if isinstance(k.__dict__.get(own), MemberDescriptorType))
        try:
            out[n] = slot.__get__(op)
        except AttributeError:
            out[n] = "<unread>"
    return out


def _fields(cls):
    return [f.name for f in dataclasses.fields(cls)]


@pytest.mark.parametrize("cls", [LlvmInstruction, PtxInstruction])
def test_lazy_instruction_factory_equals_dataclass_init_but_the_operands(cls):
    args = dict(name="add", dialect="llvm", results=("%3",), line=7, text="  %3 = add i32 %1, %2, !dbg !9",
                parent=None, loc_ref="!9", end_line=7, form="f", predicate="@%p1")
    fast = new_lazy_instruction(cls, **args)
    slow = cls(name="add", dialect="llvm", results=("%3",), operands=(), types="", attributes="",
               location=UNKNOWN_LOCATION, line=7, text=args["text"], regions=(), parent=None, loc_ref="!9",
               end_line=7, form="f", predicate="@%p1")
    names = _fields(cls)
    assert _slots(fast, names) == {**_slots(slow, names), "operands": "<unread>"}
    assert fast._unread and not slow._unread  # the dataclass __init__ builds an op whole
    assert fast.operands == cls.read_details(args["text"])[0]  # read on first use


def test_lazy_mlir_op_factory_equals_dataclass_init_but_the_details():
    text = "%5 = arith.addi %3, %4 : tensor<128xi32, #blocked> loc(#loc7)"
    fast = new_lazy_op(MlirOp, "arith.addi", "arith", ("%5",), 4, text, None, "#loc7", 4, "")
    slow = MlirOp(name="arith.addi", dialect="arith", results=("%5",), operands=(), types="", attributes="",
                  location=UNKNOWN_LOCATION, line=4, text=text, regions=(), parent=None, loc_ref="#loc7",
                  end_line=4, form="")
    names = _fields(MlirOp)
    assert _slots(fast, names) == {**_slots(slow, names), "operands": "<unread>", "types": "<unread>",
                                   "attributes": "<unread>"}
    assert fast._unread and not slow._unread and slow.types == ""
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


def test_def_use_reads_the_unread_details_at_once_and_keeps_what_was_read():
    """def-use reads every lazy op's details in one loop (read_unread_details); an op
    read before, and changed by hand since, keeps the change; the values equal the
    eager parse's."""
    from irscope.ir import parse_mlir
    from irscope.ir.model import read_unread_details

    text = """module {
  tt.func @k(%a: i32 loc(#loc1)) {
    %0 = arith.addi %a, %a : i32 loc(#loc1)
    %1 = arith.muli %0, %a {flag = 1 : i32} : i32 loc(#loc1)
    %2 = arith.subi %1, %0 : i32 loc(#loc1)
    tt.return loc(#loc1)
  } loc(#loc1)
} loc(#loc1)
#loc1 = loc("k.py":1:0)
"""
    lazy, eager = parse_mlir(text, "ttgir"), parse_mlir(text, "mlir")
    ops = list(lazy.ops())
    assert all(isinstance(op, MlirOp) and op._unread for op in ops)
    ops[1].operands  # one op read on first use...
    ops[1].operands = ("%changed",)  # ...and changed by hand
    du = lazy.functions[0].def_use()
    assert not any(op._unread for op in ops)
    assert ops[1].operands == ("%changed",)
    for got, want in zip(ops, eager.ops()):
        if got is not ops[1]:
            assert (got.operands, got.types, got.attributes) == (want.operands, want.types, want.attributes)
    assert [u.op.name for u in du.values["%0"].uses] == ["arith.subi"]  # the hand-made %changed uses none
    read_unread_details(ops)  # nothing left to read: a no-op
    assert ops[1].operands == ("%changed",)


def test_uses_list_every_operand_that_reads_a_value_and_users_each_op_once():
    """A value read twice by one op has two uses (operand 0 and 1) and that op once
    among its users; the flat ``use_sites`` and the ``Use`` tuples agree."""
    from irscope.ir import parse_mlir
    from irscope.ir.values import Use

    text = """module {
  tt.func @k(%a: i32 loc(#loc1)) {
    %0 = arith.addi %a, %a : i32 loc(#loc1)
    %1 = arith.muli %0, %a : i32 loc(#loc1)
    %2 = arith.subi %1, %0 : i32 loc(#loc1)
    tt.return loc(#loc1)
  } loc(#loc1)
} loc(#loc1)
#loc1 = loc("k.py":1:0)
"""
    mod = parse_mlir(text, "ttgir")
    du = mod.functions[0].def_use()
    add, mul, sub = list(mod.ops())[:3]
    a = du.values["%a"]
    assert a.uses == [Use(add, 0), Use(add, 1), Use(mul, 1)]
    assert a.use_sites == [add, 0, add, 1, mul, 1]
    assert a.users == [add, mul]
    assert du.values["%0"].uses == [Use(mul, 0), Use(sub, 1)] and du.users(add) == [mul, sub]
    assert du.values["%2"].uses == [] and du.users(sub) == []


def test_a_parsed_function_lists_the_ops_its_regions_hold():
    """Function.ops() gives the parser's list (body_ops): the same ops, in the same
    order, as walking the function's regions; truncated and garbled text too."""
    from conftest import DATA

    from irscope.ir import parse_mlir
    from irscope.ir.model import Function

    texts = [p.read_text() for p in sorted(DATA.rglob("*.tt*ir"))]
    texts += [t[: len(t) // 2] for t in texts[:6]]  # cut inside a function
    texts += ["tt.func @f() {\n  tt.func @g() {\n  %0 = arith.addi %a, %a : i32\n  }\n  tt.return\n}\n"]
    functions = 0
    for text in texts:
        for stage in ("ttgir", "mlir"):
            for fn in parse_mlir(text, stage).functions:
                assert [id(op) for op in fn.ops()] == [id(op) for op in fn._walk()]
                functions += fn.body_ops is not None
    assert functions > 20
    hand = Function(name="h", kind="tt.func")
    assert hand.body_ops is None and list(hand.ops()) == []


def test_setting_one_detail_of_an_unread_op_keeps_it_and_reads_the_others():
    text = "    %4 = tt.expand_dims %3 {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32> loc(#loc9)"
    op = new_lazy_op(MlirOp, "tt.expand_dims", "tt", ("%4",), 1, text, None, "#loc9", 1)
    op.types = "i64"  # a hand change before any read
    assert (op.operands, op.types, op.attributes) == (("%3",), "i64", "{axis = 1 : i32}")
    ins = new_lazy_instruction(LlvmInstruction, "add", "llvm", ("%3",), 1, "  %3 = add i32 %1, %2", None, "", 1)
    ins.operands = ("%9",)
    assert ins.operands == ("%9",) and not ins._unread


def test_read_unread_details_reads_instructions_operands_too():
    from irscope.ir.model import read_unread_details

    ins = new_lazy_instruction(LlvmInstruction, "add", "llvm", ("%3",), 1, "  %3 = add i32 %1, %2", None, "", 1)
    read_unread_details([ins])
    assert not ins._unread and _slots(ins, ["operands"]) == {"operands": LlvmInstruction.read_details(ins.text)[0]}


def test_a_lazy_op_copies_pickles_and_replaces_with_its_details():
    """copy and pickle restore the slots one by one, a detail before the text: the
    state holds the details read, so restoring never reads a text not there yet."""
    import copy
    import pickle

    text = "    %4 = tt.expand_dims %3 {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32> loc(#loc9)"
    want = (("%3",), "tensor<4xi32> -> tensor<4x1xi32>", "{axis = 1 : i32}")
    for clone in (copy.copy, copy.deepcopy, lambda o: pickle.loads(pickle.dumps(o)),
                  lambda o: dataclasses.replace(o, line=2)):
        op = new_lazy_op(MlirOp, "tt.expand_dims", "tt", ("%4",), 1, text, None, "#loc9", 1)
        got = clone(op)
        assert (got.operands, got.types, got.attributes) == want and got.text == text and not got._unread
        ins = new_lazy_instruction(LlvmInstruction, "add", "llvm", ("%3",), 1, "  %3 = add i32 %1, %2", None, "", 1)
        assert clone(ins).operands == LlvmInstruction.read_details(ins.text)[0]
