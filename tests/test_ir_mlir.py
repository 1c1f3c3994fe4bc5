"""Golden tests of the MLIR parser on real ttir/ttgir from Triton 3.2, 3.6 and 3.9."""

from __future__ import annotations

from pathlib import Path

import pytest

from irscope.ir import Op, parse_mlir, parse_stage

DATA = Path(__file__).parent / "data" / "ir"
VERSIONS = ("3.2.0", "3.6.0", "3.9.0")
TARGETS = ("sm80", "sm90")
KERNELS_SRC = (DATA / "kernels.py").read_text().splitlines()


def line_of(snippet: str) -> int:
    """1-based line of the single line of kernels.py that holds ``snippet``."""
    hits = [i for i, text in enumerate(KERNELS_SRC, 1) if snippet in text]
    assert len(hits) == 1, (snippet, hits)
    return hits[0]


def load(version: str, case: str, stage: str):
    kernel = case.rsplit("_", 1)[0]
    path = DATA / version / case / f"{kernel}_kernel.{stage}"
    return parse_stage(stage, path.read_text())


def first(mod, name: str) -> Op:
    return next(op for op in mod.ops() if op.name == name)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("stage", ["ttir", "ttgir"])
def test_vector_add(version, target, stage):
    mod = load(version, f"add_{target}", stage)
    assert mod.coverage == 1.0 and not mod.unknown
    assert [f.name for f in mod.functions] == ["add_kernel"]
    fn = mod.functions[0]
    assert fn.kind == "tt.func" and fn.visibility == "public"
    assert len(fn.args) == 4 and fn.args[0].type == "!tt.ptr<f32>"
    # the def line carries the function and argument locations
    assert fn.location.frame.line == line_of("def add_kernel")
    assert fn.args[0].location.frame.line == line_of("def add_kernel")
    loads = [op for op in mod.ops() if op.name == "tt.load"]
    assert len(loads) == 2
    assert loads[0].location.user_frame().line == line_of("x = tl.load(x_ptr + offsets")
    assert loads[1].location.user_frame().line == line_of("y = tl.load(y_ptr + offsets")
    assert loads[0].location.frame.file.endswith("tests/data/ir/kernels.py")
    store = first(mod, "tt.store")
    assert store.location.frame.line == line_of("tl.store(out_ptr + offsets")
    assert store.results == () and len(store.operands) == 3
    pid = first(mod, "tt.get_program_id")
    assert pid.dialect == "tt" and pid.types == "i32"
    if version == "3.2.0":  # numbered values before 3.5, source names after
        assert pid.results == ("%0",) and fn.args[0].name == "%arg0"
    else:
        assert pid.results == ("%pid",) and fn.args[0].name == "%x_ptr"
        assert pid.location.kind == "name" and pid.location.frame.name == "pid"
        assert fn.args[0].location.frame.name == "x_ptr"
    assert first(mod, "tt.return").parent is fn
    if stage == "ttgir":
        assert "#blocked" in mod.encodings
        assert "num-warps" in mod.attributes and f"cuda:{target[2:]}" in mod.attributes
    assert all(op.location.frames for op in mod.ops() if op.name in ("tt.load", "tt.store"))


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("target", TARGETS)
def test_helper_callsites(version, target):
    mod = load(version, f"helper_{target}", "ttir")
    assert mod.coverage == 1.0
    # tl.sum: a tt.reduce whose location is a callsite chain from the library
    reduce = first(mod, "tt.reduce")
    assert reduce.location.kind == "callsite"
    assert reduce.location.frame.is_library()
    assert reduce.location.user_frame().line == line_of("total = tl.sum(y, axis=0)")
    # its combine region: one block with two arguments, an addf and the return
    (region,) = reduce.regions
    (block,) = region.blocks
    assert block.label == "^bb0" and len(block.args) == 2
    assert block.args[0].type == "f32"
    assert block.args[0].location.user_frame().line == line_of("total = tl.sum")
    addf, ret = block.ops
    assert addf.name == "arith.addf" and ret.name == "tt.reduce.return"
    assert addf.parent is reduce
    # the combine function is two library levels deep, then the user's line
    assert len(addf.location.frames) == 3
    assert [f.is_library() for f in addf.location.frames] == [True, True, False]
    assert reduce.types.endswith("-> f32")
    # tl.cdiv: arith.addi from standard.py called at the user's tl.cdiv line
    cdiv = next(op for op in mod.ops() if op.name == "arith.addi"
                and op.location.frame and op.location.frame.is_library())
    assert cdiv.location.user_frame().line == line_of("num_blocks = tl.cdiv(n, BLOCK)")
    # a @triton.jit helper in the user's own file: callee frame, then the call line
    mulf = first(mod, "arith.mulf")
    assert mulf.location.kind == "callsite"
    assert [f.line for f in mulf.location.frames] == [line_of("return x * factor"),
                                                      line_of("y = _scale(x, 2.0)")]
    assert mulf.location.user_frame().line == line_of("return x * factor")


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("target", TARGETS)
def test_matmul_loop_and_encodings(version, target):
    mod = load(version, f"matmul_{target}", "ttgir")
    assert mod.coverage == 1.0
    loop = first(mod, "scf.for")
    assert loop.location.user_frame().line == line_of("for k in range(0, tl.cdiv(K, BK))")
    assert len(loop.regions) == 1 and loop.end_line > loop.line
    body_ops = [op for op in mod.ops() if op.parent is loop]
    assert body_ops and body_ops[-1].name == "scf.yield"
    dot_names = {"tt.dot", "ttng.warp_group_dot", "triton_nvidia_gpu.warp_group_dot"}
    dots = [op for op in body_ops if op.name in dot_names]
    assert dots and dots[0].location.frame.line == line_of("acc = tl.dot(a, b, acc)")
    # the loop's iteration arguments become the arguments of its body block
    entry = loop.regions[0].blocks[0]
    assert len(entry.args) >= 2 and all(a.name.startswith("%") for a in entry.args)
    assert len(loop.results) >= 1 and loop.results[0].endswith("#0")
    mma = mod.encodings["#mma"]
    assert ("versionMajor = 3" if target == "sm90" else "versionMajor = 2") in mma
    shared = mod.encodings["#shared"]
    if version != "3.2.0":
        assert ("nvmma_shared" if target == "sm90" else "swizzled_shared") in shared
        assert mma.startswith("#ttg.nvidia_mma<{")
    else:
        assert mma.startswith("#triton_gpu.nvidia_mma<{")


@pytest.mark.parametrize("version", VERSIONS)
def test_attention_nested_regions(version):
    mod = load(version, "attn_sm90", "ttgir")
    assert mod.coverage == 1.0
    loop = first(mod, "scf.for")
    reduces = [op for op in mod.ops() if op.name == "tt.reduce"]
    assert len(reduces) == 2 and all(r.parent is loop for r in reduces)
    assert {r.location.user_frame().line for r in reduces} == {
        line_of("m_ij = tl.maximum(m_i, tl.max(qk, 1))"), line_of("l_ij = tl.sum(p, 1)")}
    # ops after the loop are back in the function
    store = first(mod, "tt.store")
    assert store.parent is mod.functions[0]
    assert store.location.frame.line == line_of("tl.store(Out")


def test_ops_are_in_text_order_and_lines_match():
    text = (DATA / "3.6.0" / "attn_sm80" / "attn_kernel.ttgir").read_text()
    mod = parse_mlir(text, "ttgir")
    lines = text.split("\n")
    prev = 0
    for op in mod.ops():
        assert op.line > prev
        assert lines[op.line - 1] == op.text
        prev = op.line


def test_inline_and_alias_locations():
    text = """#loc = loc("/k.py":1:0)
#loc1 = loc("/k.py":5:7)
#loc2 = loc("/usr/lib/python3/site-packages/triton/language/standard.py":9:3)
#loc3 = loc("v"(#loc1))
#loc4 = loc(callsite(#loc2 at #loc3))
#loc5 = loc(fused[#loc1, #loc2])
#loc6 = loc(fused<"meta">[unknown, #loc4])
module {
  tt.func @f(%a: i32 loc("a"(#loc))) {
    %0 = arith.addi %a, %a : i32 loc(#loc4)
    %1 = arith.addi %0, %a : i32 loc(#loc5)
    %2 = arith.addi %1, %a : i32 loc(#loc6)
    %3 = arith.addi %2, %a : i32 loc("/k.py":7:1)
    %4 = arith.addi %3, %a : i32 loc(unknown)
    %5 = arith.addi %4, %a : i32 loc(#loc99)
    tt.return loc(callsite("/k.py":8:2 at "v"("/k.py":9:4)))
  } loc(#loc)
} loc(#loc)
"""
    mod = parse_mlir(text)
    ops = list(mod.ops())
    assert mod.coverage == 1.0
    assert ops[0].location.kind == "callsite"
    assert [(f.line, f.name) for f in ops[0].location.frames] == [(9, None), (5, "v")]
    assert ops[0].location.user_frame().line == 5
    assert ops[1].location.kind == "fused" and len(ops[1].location.parts) == 2
    assert ops[1].location.frame.line == 5
    assert ops[2].location.frame.line == 9  # the first known part of the fused list
    assert ops[3].location.frame.line == 7 and ops[3].location.kind == "file"
    assert ops[4].location.frames == () and ops[4].location.kind == "unknown"
    assert ops[5].location.frames == ()  # undefined alias
    assert [f.line for f in ops[6].location.frames] == [8, 9]
    assert mod.functions[0].args[0].location.frame.name == "a"


def test_llvm_dialect_and_unknown_lines():
    text = """module attributes {"ttg.num-warps" = 4 : i32} {
  llvm.mlir.global external @global_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8> loc(#loc)
  llvm.func @__nv_exp2f(f32) -> f32 attributes {passthrough = ["nounwind"]}
  llvm.func @k(%arg0: !llvm.ptr<1> loc("/k.py":1:0)) attributes {nvvm.kernel = 1 : ui1} {
    %0 = llvm.mlir.constant(0 : i32) : i32 loc(#loc1)
    %1 = llvm.inline_asm has_side_effects asm_dialect = att operand_attrs = [] "mov.u32 $0, 0x0;\\0A\\09@$2 ld.global.b32 { $0 }, [ $1 + 0 ];", "=r,l,b" %arg0, %0 : (!llvm.ptr<1>, i32) -> i32 loc(#loc1)
    llvm.cond_br %2, ^bb1, ^bb2 loc(#loc1)
  ^bb1:  // pred: ^bb0
    this line is garbage
    llvm.br ^bb2 loc(#loc1)
  ^bb2(%5: i32 loc("/k.py":3:3)):  // 2 preds: ^bb0, ^bb1
    llvm.return loc(#loc1)
  } loc(#loc)
} loc(#loc)
#loc = loc("/k.py":1:0)
#loc1 = loc("/k.py":2:5)
"""
    mod = parse_mlir(text)
    assert [f.name for f in mod.functions] == ["k"]
    assert [op.name for op in mod.globals] == ["llvm.mlir.global", "llvm.func"]
    asm = first(mod, "llvm.inline_asm")
    assert asm.results == ("%1",) and asm.operands == ("%arg0", "%0")
    assert asm.types == "(!llvm.ptr<1>, i32) -> i32"
    assert asm.location.frame.line == 2
    blocks = mod.functions[0].blocks
    assert [b.label for b in blocks] == [None, "^bb1", "^bb2"]
    assert blocks[2].args[0].name == "%5" and blocks[2].args[0].location.frame.line == 3
    assert mod.unknown == [(9, "    this line is garbage")]
    bad = blocks[1].ops[0]
    assert bad.name == "<unknown>" and bad.text == "    this line is garbage"
    assert 0 < mod.coverage < 1.0


def test_multiline_string_is_one_op():
    text = 'module {\n  %0 = "x.op"() {note = "two\nlines"} : () -> i32 loc(#loc)\n}\n#loc = loc("/k.py":4:2)\n'
    mod = parse_mlir(text)
    (op,) = mod.ops()
    assert op.name == "x.op" and op.line == 2 and op.end_line == 3
    assert op.location.frame.line == 4 and mod.coverage == 1.0


def test_if_while_and_private_functions():
    text = """module {
  tt.func private @helper(%x: i32 loc("/k.py":2:0)) -> i32 attributes {noinline = false} {
    %0:2 = scf.while (%arg1 = %x, %arg2 = %x) : (i32, i32) -> (i32, i32) {
      %c = arith.cmpi slt, %arg1, %arg2 : i32 loc(#loc1)
      scf.condition(%c) %arg1, %arg2 : i32, i32 loc(#loc1)
    } do {
    ^bb0(%a: i32 loc("/k.py":4:1), %b: i32 loc("/k.py":4:2)):
      %r = scf.if %c -> (i32) {
        scf.yield %a : i32 loc(#loc1)
      } else {
        scf.yield %b : i32 loc(#loc1)
      } loc(#loc2)
      scf.yield %r, %b : i32, i32 loc(#loc1)
    } loc(#loc2)
    tt.return %0#1 : i32 loc(#loc1)
  } loc(#loc1)
} loc(#loc1)
#loc1 = loc("/k.py":3:5)
#loc2 = loc("/k.py":6:7)
"""
    mod = parse_mlir(text)
    assert mod.coverage == 1.0
    (fn,) = mod.functions
    assert (fn.name, fn.visibility, fn.attributes) == ("helper", "private", "{noinline = false}")
    assert fn.end_line == 16 and fn.location.frame.line == 3
    loop = first(mod, "scf.while")
    assert loop.results == ("%0#0", "%0#1") and len(loop.regions) == 2
    assert [b.args for b in loop.regions[0].blocks][0][0].name == "%arg1"
    after = loop.regions[1].blocks[0]
    assert after.label == "^bb0" and [a.name for a in after.args] == ["%a", "%b"]
    assert after.args[1].location.frame.col == 2
    branch = first(mod, "scf.if")
    assert branch.parent is loop and len(branch.regions) == 2
    assert branch.location.frame.line == 6 and branch.end_line == 12
    yields = [op for op in mod.ops() if op.name == "scf.yield"]
    assert [y.parent for y in yields] == [branch, branch, loop]
    assert first(mod, "tt.return").operands == ("%0#1",)
