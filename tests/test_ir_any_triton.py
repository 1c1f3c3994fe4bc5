"""IR that no capture of this project printed: hand-written MLIR in the styles of
Triton's own lit tests (statements split over lines, named warp-specialize regions,
generic syntax, unregistered ops), each failure class that ``scripts/lit_coverage.py``
found as a snippet written here; and the property that a text diffed with itself is
empty, always."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irscope import text_guard
from irscope.compiler.stages import STAGES
from irscope.ir import Module, Op, ParseCache, op_form, op_forms, parse_stage
from irscope.irdiff.engine import diff_modules
from test_ir_props import garble

DATA = Path(__file__).parent / "data" / "ir"


@pytest.fixture(autouse=True)
def strict():
    """A parser or diff bug raises here instead of degrading."""
    with text_guard.strict():
        yield


def parse(text: str, stage: str = "ttgir") -> Module:
    return parse_stage(stage, text)


def names(mod: Module) -> list[str]:
    return [op.name for op in mod.ops()]


def self_diff(text: str, stage: str = "ttgir") -> list[str]:
    """The changes of ``text`` diffed with a second parse of itself, as readable lines."""
    d = diff_modules(parse_stage(stage, text), parse_stage(stage, text), stage)
    return [f"{c.kind} {c.op} {c.details}" for c in d.changes]


def agree(text: str) -> None:
    """A stage file's parse, a snapshot's parse (line templates) and the op-form summary
    give one answer on ``text``."""
    direct = parse_stage("ttgir", text)
    templated = parse_stage("mlir", text, ParseCache())
    rows = [(op.name, op.results, op.operands, op.types, op.attributes, op.line, op.end_line, op_form(op))
            for op in direct.ops()]
    assert rows == [(op.name, op.results, op.operands, op.types, op.attributes, op.line, op.end_line,
                     op_form(op)) for op in templated.ops()]
    assert direct.coverage == templated.coverage
    want = [(op.name, op_form(op)) for op in direct.ops() if op.name != "<unknown>"]
    assert op_forms("ttgir", text) == want
    assert op_forms("ttgir", text, ParseCache()) == want


# ------------------------------------------------------------ self-diff

BRANCHES = """\
tt.func @branchy(%lo: index, %hi: index, %step: index) {
  cf.br ^head(%lo : index)
^head(%i: index):
  %done = arith.cmpi sge, %i, %hi : index
  cf.cond_br %done, ^exit, ^body
^body:
  %next = arith.addi %i, %step : index
  cf.br ^head(%next : index)
^exit:
  tt.return
}
"""

COMBINER_NO_SPACE = """\
tt.func @sum_rows(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %s = "tt.reduce"(%x) <{axis = 1 : i32}>({
  ^bb0(%l: f32, %r: f32):
    %t = arith.addf %l, %r : f32
    tt.reduce.return %t : f32
  }) : (tensor<4x8xf32>) -> tensor<4xf32>
  tt.return %s : tensor<4xf32>
}
"""


def test_a_function_with_branches_diffed_with_itself_is_empty():
    # The arguments of a function's later blocks (^head(%i)) were not mapped onto
    # each other, so every use of %i read as rewired.
    mod = parse(BRANCHES)
    assert mod.coverage == 1.0 and [b.label for b in mod.functions[0].blocks] == [None, "^head", "^body", "^exit"]
    assert self_diff(BRANCHES) == []


def test_a_region_opened_without_a_space_is_a_region():
    # '<{axis = 1 : i32}>({' opens the combiner region as ' ({' does.
    mod = parse(COMBINER_NO_SPACE)
    reduce = next(op for op in mod.ops() if op.name == "tt.reduce")
    assert len(reduce.regions) == 1 and [o.name for o in reduce.regions[0].blocks[0].ops] == [
        "arith.addf", "tt.reduce.return"]
    assert reduce.regions[0].blocks[0].args[0].name == "%l"
    assert reduce.types == "(tensor<4x8xf32>) -> tensor<4xf32>"
    assert self_diff(COMBINER_NO_SPACE) == []


def test_two_functions_of_one_name_pair_in_order():
    text = "tt.func @f(%a: i32) {\n  %b = arith.addi %a, %a : i32\n  tt.return\n}\n" \
           "tt.func @f(%a: f32) {\n  %b = arith.addf %a, %a : f32\n  tt.return\n}\n"
    assert self_diff(text) == []


# ------------------------------------------------------- function forms

FUNCTION_FORMS = """\
module {
  tt.func public @a(%x: i32) {
    tt.return
  }
  func.func private @b(%x: i32) -> i32 {
    return %x : i32
  }
  llvm.func internal @c(%x: i32) -> i32 attributes {noinline = false} {
    llvm.return %x : i32
  }
  "tt.func"() <{function_type = (i32) -> (), sym_name = "d", sym_visibility = "public"}> ({
  ^bb0(%x: i32):
    %y = arith.addi %x, %x : i32
    tt.return
  }) : () -> ()
  tt.func private @declared(i32) -> i32
}
"""


def test_every_function_form_is_a_function():
    mod = parse(FUNCTION_FORMS)
    assert mod.coverage == 1.0
    assert [(f.kind, f.name, f.visibility) for f in mod.functions] == [
        ("tt.func", "a", "public"), ("func.func", "b", "private"), ("llvm.func", "c", "internal"),
        ("tt.func", "d", "public")]
    generic = mod.functions[3]
    assert generic.blocks[0].args[0].name == "%x" and names(mod)[-1] == "tt.func"  # the declaration
    assert [op.name for op in generic.ops()] == ["arith.addi", "tt.return"]
    assert generic.ops().__next__().parent is generic
    assert self_diff(FUNCTION_FORMS) == []
    agree(FUNCTION_FORMS)


# ----------------------------------------------- statements over lines

SPLIT_SIGNATURE = """\
#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  // CHECK-LABEL: @split_args
  tt.func @split_args(%src: tensor<32x32x!tt.ptr<f16>, #blocked>,
                      // a comment line between two arguments
                      %mask: tensor<32x32xi1, #blocked>, // a trailing comment {{with braces}}
                      %n: i32 {tt.divisibility = 16 : i32}
  ) -> tensor<32x32xf16, #blocked> {
    %v = tt.load %src, %mask : tensor<32x32x!tt.ptr<f16>, #blocked>
    tt.return %v : tensor<32x32xf16, #blocked>
  }
}
"""


def test_a_signature_over_several_lines_is_one_function():
    mod = parse(SPLIT_SIGNATURE)
    assert mod.coverage == 1.0 and mod.unknown == []
    (fn,) = mod.functions
    assert fn.name == "split_args" and [a.name for a in fn.args] == ["%src", "%mask", "%n"]
    assert fn.args[2].type == "i32"
    assert fn.line == 4 and names(mod) == ["tt.load", "tt.return"]
    assert next(mod.ops()).parent is fn
    assert self_diff(SPLIT_SIGNATURE) == []
    agree(SPLIT_SIGNATURE)


SPLIT_OPS = """\
tt.func @split_ops(%a: tensor<64x32xf16>, %b: tensor<32x64xf16>, %c: tensor<64x64xf32>) {
  %d = tt.dot %a, %b, %c : tensor<64x32xf16> *
                           tensor<32x64xf16>
                        -> tensor<64x64xf32>
  %e = ttng.warp_group_dot %a, %b, %d
      {inputPrecision = 0 : i32, maxNumImpreciseAcc = 0 : i32} :
      tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
  %f = tt.join %d, %e:
      tensor<64x64xf32> -> tensor<64x64x2xf32>
  %g = arith.constant dense<[
      1, 2, 3, 4
  ]> : tensor<4xi32>
  tt.return
}
"""


def test_an_op_over_several_lines_is_one_op():
    mod = parse(SPLIT_OPS)
    assert mod.coverage == 1.0
    ops = {op.name: op for op in mod.ops()}
    assert list(ops) == ["tt.dot", "ttng.warp_group_dot", "tt.join", "arith.constant", "tt.return"]
    dot = ops["tt.dot"]
    assert (dot.line, dot.end_line) == (2, 4)
    assert dot.operands == ("%a", "%b", "%c") and dot.types.endswith("-> tensor<64x64xf32>")
    wgd = ops["ttng.warp_group_dot"]
    assert "inputPrecision" in wgd.attributes and wgd.types.startswith("tensor<64x32xf16> *")
    assert ops["tt.join"].types == "tensor<64x64xf32> -> tensor<64x64x2xf32>"
    assert ops["arith.constant"].types == "tensor<4xi32>"
    assert self_diff(SPLIT_OPS) == []
    agree(SPLIT_OPS)


SPLIT_ALIASES = """\
#blocked= #ttg.blocked<{
    sizePerThread = [1, 1],
    threadsPerWarp = [32, 1],
    warpsPerCTA = [4, 1],
    order = [0, 1]
}>
module attributes {
    "ttg.num-warps" = 4 : i32,
    "ttg.threads-per-warp" = 32 : i32
} {
  tt.func @f(%p: !tt.ptr<f32>) {
    %0 =  tt.splat %p : !tt.ptr<f32> -> tensor<128x1x!tt.ptr<f32>, #blocked>
    tt.return
  }
}
"""


def test_aliases_and_module_attributes_over_several_lines():
    mod = parse(SPLIT_ALIASES)
    assert mod.coverage == 1.0
    assert mod.encoding("#blocked").kind == "blocked"
    assert '"ttg.num-warps" = 4 : i32' in mod.attributes
    (splat,) = [op for op in mod.ops() if op.name == "tt.splat"]
    assert splat.results == ("%0",) and splat.operands == ("%p",)
    assert self_diff(SPLIT_ALIASES) == []
    agree(SPLIT_ALIASES)


# ------------------------------------------------ warp-specialize regions

WARP_SPECIALIZE = """\
tt.func @ws(%x: !tt.ptr<f32>, %n: i32) {
  %r = ttg.warp_specialize(%x, %n) attributes {requestedRegisters = array<i32: 24, 24>}
  default {
    %one = arith.constant 1 : i32
    ttg.warp_yield %one : i32
  }
  partition0(%p: !tt.ptr<f32>, %m: i32) num_warps(4) {
    %s = tt.splat %m : i32 -> tensor<4xi32>
    ttg.warp_return
  }
  partition1  num_warps(2) {
    ttg.warp_return
  } : (!tt.ptr<f32>, i32) -> i32
  %t = arith.addi %r, %n : i32
  tt.return
}
"""


def test_warp_specialize_regions_are_regions():
    mod = parse(WARP_SPECIALIZE)
    assert mod.coverage == 1.0 and mod.unknown == []
    ws = next(op for op in mod.ops() if op.name == "ttg.warp_specialize")
    assert len(ws.regions) == 3
    default, p0, p1 = (r.blocks[0] for r in ws.regions)
    assert [o.name for o in default.ops] == ["arith.constant", "ttg.warp_yield"]
    assert [a.name for a in p0.args] == ["%p", "%m"] and [o.name for o in p0.ops] == ["tt.splat", "ttg.warp_return"]
    assert [o.name for o in p1.ops] == ["ttg.warp_return"]
    assert all(o.parent is ws for b in (default, p0, p1) for o in b.ops)
    assert ws.types == "(!tt.ptr<f32>, i32) -> i32" and ws.end_line == 13
    fn = mod.functions[0]
    assert [o.name for b in fn.blocks for o in b.ops] == ["ttg.warp_specialize", "arith.addi", "tt.return"]
    assert self_diff(WARP_SPECIALIZE) == []
    agree(WARP_SPECIALIZE)


def test_a_region_header_with_no_op_above_is_unknown():
    mod = parse("tt.func @f() {\n  default {\n  }\n  tt.return\n}\n")
    assert (2, "  default {") in mod.unknown


# ------------------------------------------------------ other shapes

UNREGISTERED = """\
tt.func @uses(%a: i32, %b: tensor<4xf32>) {
  "use"(%a) : (i32) -> ()
  "sink"(%a, %b) {tag = 1 : i32}: (i32, tensor<4xf32>) -> ()
  scf.for %i = %a to %a step %a : i32{
    "body"(%i) : (i32) -> ()
  }
  tt.return
}
"""


def test_unregistered_ops_in_generic_form_are_ops():
    mod = parse(UNREGISTERED)
    assert mod.coverage == 1.0
    assert names(mod) == ["use", "sink", "scf.for", "body", "tt.return"]
    loop = next(op for op in mod.ops() if op.name == "scf.for")
    assert [o.name for o in loop.regions[0].blocks[0].ops] == ["body"]  # ': i32{' opens its region
    assert self_diff(UNREGISTERED) == []
    agree(UNREGISTERED)


def test_an_unclosed_bracket_costs_only_its_own_line():
    # Truncated text: the statement never closes; the lines after it are read one by one.
    text = "tt.func @f(%a: i32) {\n  %b = arith.addi %a, %a : tensor<4x\n  %c = arith.muli %a, %a : i32\n  tt.return\n}\n"
    mod = parse(text)
    assert mod.unknown == [(2, "  %b = arith.addi %a, %a : tensor<4x")]
    assert names(mod) == ["<unknown>", "arith.muli", "tt.return"] and len(mod.functions) == 1
    agree(text)
    cut = "tt.func @f(%a: i32,\n  %b: i32"
    assert parse(cut).unknown == [(1, "tt.func @f(%a: i32,"), (2, "  %b: i32")]
    agree(cut)


def test_a_continuation_line_with_nothing_to_continue_is_unknown():
    text = "tt.func @f() {\n  -> tensor<4xf32>\n  tt.return\n}\n"
    assert parse(text).unknown == [(2, "  -> tensor<4xf32>")]
    agree(text)


# ------------------------------------------------------------ property

def _fixture(stage: str) -> str:
    # One case of each stage: the attention kernel on sm_90 has every construct the
    # fixtures hold (loops, reductions, layouts, all five stages).
    return next((DATA / "3.9.0" / "attn_sm90").glob(f"*{STAGES[stage].extension}")).read_text()


FIXTURES = {stage: _fixture(stage) for stage in ("ttir", "ttgir", "llir", "ptx", "sass")}
SNIPPETS = [BRANCHES, COMBINER_NO_SPACE, FUNCTION_FORMS, SPLIT_SIGNATURE, SPLIT_OPS, SPLIT_ALIASES,
            WARP_SPECIALIZE, UNREGISTERED]
SETTINGS = settings(max_examples=int(os.environ.get("IR_PROPS_EXAMPLES", "40")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("stage", sorted(FIXTURES))
@SETTINGS
@given(data=st.data())
def test_any_parsed_module_diffed_with_itself_is_empty(stage, data):
    """A real stage text, garbled or cut anywhere, diffed with itself: no change."""
    text = FIXTURES[stage]
    if data.draw(st.booleans()):
        text = garble(data, text)
    else:
        text = text[:data.draw(st.integers(0, len(text)))]
    assert self_diff(text, stage) == []


@SETTINGS
@given(data=st.data())
def test_hand_written_snippets_garbled_diff_with_themselves_empty(data):
    """The snippets above, spliced together and garbled: no change against
    themselves, and the parse paths agree."""
    parts = data.draw(st.lists(st.sampled_from(SNIPPETS), min_size=1, max_size=3))
    text = garble(data, "\n".join(parts))
    assert self_diff(text) == []
    agree(text)


def test_dataflow_tells_apart_ops_of_one_shape():
    """op_pairs pairs ops by shape; dataflow_agrees keeps a pair only when its operands
    are the values its operands' pairs define."""
    from irscope.irdiff.engine import dataflow_agrees, op_pairs

    old = "tt.func @f(%a: i32, %b: i32) {\n  %x = arith.addi %a, %b : i32\n  %y = arith.muli %x, %a : i32\n  tt.return\n}\n"
    new = "tt.func @f(%a: i32, %b: i32) {\n  %x = arith.addi %a, %b : i32\n  %y = arith.muli %b, %a : i32\n  tt.return\n}\n"
    a, b = parse(old), parse(new)
    pairs = op_pairs(a, b, "ttgir")
    assert [(x.name, y.name, how) for x, y, how in pairs] == [
        ("arith.addi", "arith.addi", "aligned"), ("arith.muli", "arith.muli", "aligned"),
        ("tt.return", "tt.return", "aligned")]
    kept = dataflow_agrees(a, b, [(x, y) for x, y, _ in pairs])
    assert [x.name for x, _ in kept] == ["arith.addi", "tt.return"]  # muli reads %b where it read %x
