"""Golden tests of the LLVM IR, PTX and SASS parsers on real Triton output."""

from __future__ import annotations

from pathlib import Path

import pytest

from irscope.ir import (ParseCache, parse_llvm, parse_ptx, parse_sass, parse_snapshots,
                        parse_stage, split_llvm_pass_dump)

DATA = Path(__file__).parent / "data" / "ir"
VERSIONS = ("3.2.0", "3.6.0", "3.9.0")
TARGETS = ("sm80", "sm90")
KERNELS_SRC = (DATA / "kernels.py").read_text().splitlines()


def line_of(snippet: str, kernel: str | None = None) -> int:
    """1-based line of kernels.py holding ``snippet`` (the first one in ``kernel``'s
    body when given, else the only one)."""
    start = line_of(f"def {kernel}(") if kernel else 0
    hits = [i for i, text in enumerate(KERNELS_SRC, 1) if snippet in text and i > start]
    assert hits and (kernel or len(hits) == 1), (snippet, hits)
    return hits[0]


def load(version: str, case: str, stage: str):
    kernel = case.rsplit("_", 1)[0]
    return parse_stage(stage, (DATA / version / case / f"{kernel}_kernel.{stage}").read_text())


# ---------------------------------------------------------------- LLVM IR

@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("target", TARGETS)
def test_llir_vector_add(version, target):
    mod = load(version, f"add_{target}", "llir")
    assert mod.coverage == 1.0
    (fn,) = mod.functions
    assert fn.name == "add_kernel" and fn.kind == "define"
    assert fn.args[0].name == "%0" and "ptr addrspace(1)" in fn.args[0].type
    assert fn.location.frame.line == line_of("def add_kernel")
    assert fn.location.frame.name == "add_kernel"
    # an intrinsic call from 3.3 on, inline asm reading %ctaid.x in 3.2
    ctaid = next(op for op in mod.ops() if "ctaid.x" in op.text and op.name == "call")
    assert ctaid.dialect == "llvm" and ctaid.loc_ref.startswith("!")
    assert ctaid.location.frame.line == line_of("pid = tl.program_id(0)", "add_kernel")
    assert ctaid.location.frame.file.endswith("tests/data/ir/kernels.py")
    ret = [op for op in mod.ops() if op.name == "ret"]
    assert len(ret) == 1 and ret[0].location.frame.line >= line_of("def add_kernel")
    assert [g.name for g in mod.globals][:1] in (["global"], ["declare"])


@pytest.mark.parametrize("version", VERSIONS)
def test_llir_inlined_chain(version):
    mod = load(version, "helper_sm80", "llir")
    assert mod.coverage == 1.0
    lib = [op for op in mod.ops() if op.location.frame and op.location.frame.is_library()]
    assert lib
    users = {op.location.user_frame().line for op in lib}
    assert line_of("num_blocks = tl.cdiv(n, BLOCK)") in users
    assert line_of("total = tl.sum(y, axis=0)") in users
    # the combine function of tl.sum: two library frames from 3.3 on (one in 3.2)
    depth = 2 if version == "3.2.0" else 3
    deep = [op for op in lib if op.name == "fadd" and len(op.location.frames) == depth]
    assert deep and deep[0].location.kind == "callsite"
    assert "!DILocation" in mod.loc_aliases[deep[0].loc_ref]


@pytest.mark.parametrize("version", VERSIONS)
def test_llir_loop_blocks(version):
    mod = load(version, "matmul_sm80", "llir")
    (fn,) = mod.functions
    labels = [b.label for b in fn.blocks]
    assert labels[0] is None and len(labels) >= 3
    phis = [op for op in mod.ops() if op.name == "phi"]
    assert phis and all(op.results for op in phis)
    lines = {op.location.frame.line for op in mod.ops() if op.location.frame}
    assert line_of("acc = tl.dot(a, b, acc)") in lines


def test_llvm_pass_dump_snapshots():
    text = (DATA / "3.6.0" / "add_sm80" / "llvm_passes.txt").read_text()
    dump = split_llvm_pass_dump(text)
    mods = parse_snapshots(dump, ParseCache())
    assert all(m.coverage == 1.0 for m in mods)
    # function-level dumps print no metadata: !dbg resolves through the module's
    func_level = [(s, m) for s, m in zip(dump, mods)
                  if s.family == "llvm" and s.anchor_name == "add_kernel"]
    assert func_level
    s, m = func_level[0]
    assert not m.loc_aliases
    assert any(op.location.frame for op in m.ops())
    # machine IR of the codegen passes: locations from the trailing comments
    mir = [(s, m) for s, m in zip(dump, mods) if s.family == "mir"]
    assert len(mir) == 37
    m = mir[0][1]
    (fn,) = m.functions
    assert fn.kind == "mir" and fn.name == "add_kernel"
    assert fn.blocks[0].label == "bb.0"
    op = next(op for op in m.ops() if op.name == "INT_PTX_SREG_CTAID_x")
    assert op.dialect == "mir" and op.results and op.results[0].startswith("%")
    assert op.location.frame.file == "kernels.py"
    assert op.location.frame.line == line_of("pid = tl.program_id(0)", "add_kernel")


def test_llvm_text_forms():
    text = """; ModuleID = 'x'
source_filename = "x"
%struct.s = type { i32, i32 }
$c = comdat any
@g = internal global i32 0
define void @f(i32 %a) {
entry:
  switch i32 %a, label %done [
    i32 0, label %done
  ]
; <label>:3:                                      ; preds = %entry
  %x = add nsw i32 %a, 1, !dbg !9, !llvm.loop !12
  store i32 %x, ptr @g, align 4
  frobnicate i32 %x, !dbg !11
  br label %done
done:
  ret void
}
declare i32 @h(i32)
attributes #0 = { nounwind }
!9 = !DILocation(line: 4, column: 2, scope: !10, inlinedAt: !11)
!10 = distinct !DISubprogram(name: "f", scope: !13, file: !13, line: 1)
!11 = !DILocation(line: 8, column: 1, scope: !10)
!13 = !DIFile(filename: "k.py", directory: "/src")
garbage here
"""
    mod = parse_llvm(text)
    (fn,) = mod.functions
    assert [b.label for b in fn.blocks] == ["entry", "3", "done"]
    add = next(op for op in mod.ops() if op.name == "add")
    assert add.results == ("%x",) and add.operands == ("%a",) and add.loc_ref == "!9"
    assert [str(f) for f in add.location.frames] == ["/src/k.py:4:2", "/src/k.py:8:1"]
    assert add.location.frame.name == "f"
    store = next(op for op in mod.ops() if op.name == "store")
    assert store.operands == ("%x", "@g") and store.results == ()
    assert mod.unknown == [(14, "  frobnicate i32 %x, !dbg !11"), (25, "garbage here")]
    bad = next(op for op in mod.ops() if op.name == "<unknown>")
    assert bad.location.frame.line == 8  # the location found on it is kept
    assert [g.name for g in mod.globals[:2]] == ["global", "declare"]


# ---------------------------------------------------------------- PTX

@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("target", TARGETS)
def test_ptx(version, target):
    mod = load(version, f"helper_{target}", "ptx")
    assert mod.coverage == 1.0 and not mod.unknown
    (fn,) = mod.functions
    assert fn.name == "helper_kernel" and fn.kind == ".entry" and fn.visibility == ".visible"
    assert fn.args[0].name == "helper_kernel_param_0"
    assert f".target sm_{target[2:]}" in mod.attributes
    paths = set(mod.loc_aliases.values())
    assert any(p.endswith("tests/data/ir/kernels.py") for p in paths)
    assert fn.blocks[0].label is not None or fn.blocks[0].ops
    ctaid = next(op for op in mod.ops() if "%ctaid.x" in op.operands)
    assert ctaid.dialect == "ptx"
    assert ctaid.location.frame.line == line_of("pid = tl.program_id(0)", "helper_kernel")
    loads = [op for op in mod.ops() if op.name.startswith("ld.global")]
    assert loads and all(op.predicate.startswith("@%p") for op in loads)
    assert {op.location.frame.line for op in loads} == {line_of("x = tl.load(x_ptr + offs",
                                                                "helper_kernel")}
    lib = [op for op in mod.ops() if op.location.frame and op.location.frame.is_library()]
    assert lib
    if version == "3.2.0":  # its PTX carries no inlining information
        assert all(len(op.location.frames) == 1 for op in lib)
        return
    # caller frames: from the .loc comment (base names mapped to the .file paths,
    # 3.6) or from `inlined_at` followed through the call sites' own .loc (3.9)
    for op in lib:
        assert op.location.kind == "callsite"
        assert op.location.frames[-1].file.endswith("tests/data/ir/kernels.py")
    users = {op.location.user_frame().line for op in lib}
    assert users == {line_of("total = tl.sum(y, axis=0)"), line_of("num_blocks = tl.cdiv")}
    assert max(len(op.location.frames) for op in lib) == 3
    scale = [op for op in mod.ops() if op.location.frame
             and op.location.frame.line == line_of("return x * factor")]
    assert scale and scale[0].location.frames[1].line == line_of("y = _scale(x, 2.0)")


def test_ptx_text_forms():
    text = """.version 8.4
.target sm_80
.address_size 64
.extern .func (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.visible .entry k(
	.param .u64 k_param_0
)
.maxntid 128, 1, 1
{
	.reg .b32 	%r<4>;
	.loc	1 5 3, function_name $L__info_string0, inlined_at 1 9 2
	{
	.reg .pred %p;
	@!%p1 add.s32 %r1, %r2, 1;
	frobnicate.u32 %r1;
	}
	call.uni (retval0),
	vprintf,
	(
	param0
	);
$L__BB0_2:
	.loc	1 0 7
	ret;
}
	.file	1 "/src" "k.py"
	.section	.debug_loc	{	}
	.section	.debug_str
	{
$L__info_string0:
.b8 95
	}
"""
    mod = parse_ptx(text)
    assert mod.unknown == [(20, "\tfrobnicate.u32 %r1;")]
    assert [f.name for f in mod.functions] == ["k"]
    assert [(g.name, g.results) for g in mod.globals] == [("declare", ("vprintf",))]
    declare, add, bad, call, ret = mod.ops()
    assert bad.name == "<unknown>" and bad.location == add.location
    assert add.predicate == "@!%p1" and add.operands == ("%r1", "%r2", "1")
    assert [str(f) for f in add.location.frames] == ["/src/k.py:5:3", "/src/k.py:9:2"]
    assert call.name == "call.uni" and call.end_line == call.line + 4
    assert ret.location.frames == ()  # line 0: no source line
    assert [b.label for b in mod.functions[0].blocks] == [None, "$L__BB0_2"]


# ---------------------------------------------------------------- SASS

@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("target", TARGETS)
def test_sass(version, target):
    mod = load(version, f"add_{target}", "sass")
    assert mod.coverage == 1.0 and not mod.unknown
    (fn,) = mod.functions
    assert fn.name == "add_kernel" and fn.kind == "sass"
    ops = list(mod.ops())
    assert ops[0].offset == 0 and all(b.offset > a.offset for a, b in zip(ops, ops[1:]))
    assert all(op.dialect == "sass" and op.location.frames for op in ops)
    loads = [op for op in ops if op.name.startswith("LDG")]
    assert loads and {op.location.frame.line for op in loads} <= {
        line_of("x = tl.load(x_ptr + offsets"), line_of("y = tl.load(y_ptr + offsets")}
    assert any(op.predicate.startswith("@") for op in ops)
    assert ops[-1].name in ("BRA", "NOP", "EXIT")
    assert fn.blocks[-1].label.startswith(".L_x_")


def test_sass_text_forms():
    text = """	.headerflags	@"EF_CUDA_SM90"
//--------------------- .text.k       --------------------------
	.section	.text.k,"ax",@progbits
	.sectioninfo	@"SHI_REGISTERS=14"
        .global         k
k:
.text.k:
	//## File "/src/std.py", line 7 inlined at "/src/k.py", line 3 inlined at "/src/k.py", line 9
        /*0000*/                   HGMMA.64x32x16.F32 R24, gdesc[UR8], RZ, !UPT, gsb0 ;
        /* 0x000fe40000000f00 */
	//## ------ <inlined end> ------
        /*0010*/              @!UP0 BRA `(.L_x_1) ;
.L_x_1:
        /*0020*/                   EXIT ;
???
"""
    mod = parse_sass(text)
    (fn,) = mod.functions
    a, b, c, bad = mod.ops()
    assert a.name == "HGMMA.64x32x16.F32" and a.operands[:2] == ("R24", "gdesc[UR8]")
    assert [f.line for f in a.location.frames] == [7, 3, 9] and a.location.kind == "callsite"
    assert a.location.user_frame().file == "/src/std.py"  # not under triton/language
    assert b.predicate == "@!UP0" and b.offset == 0x10 and b.location == a.location
    assert [blk.label for blk in fn.blocks] == [None, ".L_x_1"]
    assert bad.name == "<unknown>" and mod.unknown == [(15, "???")]
