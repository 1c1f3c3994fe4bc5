"""Parsed types (:mod:`irscope.ir.types`): golden checks on real fixture ops, every
type text of every fixture parsed (nothing modelled left opaque, and printed back
as written), the shapes the fixtures lack, and garbled text never raising."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from irscope import text_guard
from irscope.ir import parse_snapshots, parse_stage, split_pass_dump
from irscope.ir.types import (ArrayType, FunctionType, MemDescType, OpaqueType, PointerType,
                              ScalarType, StructType, TensorType, TokenType, VectorType, VoidType,
                              op_types, parse_leading_type, parse_op_types, parse_type)

DATA = Path(__file__).parent / "data" / "ir"
VERSIONS = ("3.2.0", "3.6.0", "3.9.0")


@pytest.fixture(autouse=True)
def strict(monkeypatch):
    # a parser bug raises here instead of degrading to OpaqueType
    monkeypatch.setattr(text_guard, "STRICT", True)


@cache
def module(version: str, case: str, stage: str):
    path = next((DATA / version / case).glob(f"*.{stage}"))
    return parse_stage(stage, path.read_text())


@cache
def fixtures(stage: str):
    return [(p.parent.parent.name, p.parent.name, parse_stage(stage, p.read_text()))
            for v in VERSIONS for p in sorted((DATA / v).glob(f"*/*.{stage}"))]


@cache
def snapshot_modules():
    """The MLIR pass dumps: TTIR through the LLVM dialect."""
    return [m for p in sorted(DATA.glob("*/*/mlir_passes.txt"))
            for m in parse_snapshots(split_pass_dump(p.read_text()))]


def find_op(mod, name: str, contains: str = ""):
    return next(op for op in mod.ops() if op.name == name and contains in op.text)


def test_dot_of_matmul_sm80():
    op = find_op(module("3.9.0", "matmul_sm80", "ttgir"), "tt.dot")
    ts = parse_op_types(op.types)
    assert ts.form == "dot"
    a, b = ts.operands
    (d,) = ts.results
    assert isinstance(a, TensorType) and a.shape == (64, 32) and a.element == ScalarType("f16", 16, "float")
    assert a.encoding_ref == "#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>"
    assert b.shape == (32, 32)
    assert d.shape == (64, 32) and str(d.element) == "f32" and d.encoding_ref == "#mma"
    assert str(d) == "tensor<64x32xf32, #mma>" and d.short() == "64x32xf32"
    aliases = module("3.9.0", "matmul_sm80", "ttgir").encodings
    assert d.encoding_text(aliases).startswith("#ttg.nvidia_mma<{versionMajor = 2")
    assert a.encoding_text(aliases) == a.encoding_ref  # inline: nothing to resolve


def test_warp_group_dot_of_matmul_sm90():
    mod = module("3.9.0", "matmul_sm90", "ttgir")
    ts = op_types(find_op(mod, "ttng.warp_group_dot"), mod.encodings)
    a, b = ts.operands
    assert isinstance(a, MemDescType) and a.shape == (64, 32) and a.alloc_shape == (64, 32)
    assert (a.encoding_ref, a.memory_space, a.mutable) == ("#shared", "#smem", False)
    assert a.memory_space_text(mod.encodings) == "#ttg.shared_memory"
    assert a.memory_kind(mod.encodings) == "shared"
    assert a.encoding_text(mod.encodings).startswith("#ttg.nvmma_shared<")
    assert str(b) == "!ttg.memdesc<32x32xf16, #shared, #smem>"
    assert ts.results[0].encoding_text(mod.encodings).startswith("#ttg.nvidia_mma<{versionMajor = 3")
    # the wait passes its three operands through: one result per type
    wait = op_types(find_op(mod, "ttng.warp_group_dot_wait"))
    assert wait.form == "list" and len(wait.results) == 3 and wait.results == wait.operands


def test_triton_3_2_memdesc_spelling():
    mod = module("3.2.0", "matmul_sm90", "ttgir")
    op = next(op for op in mod.ops() if op.name.endswith("warp_group_dot"))
    a = parse_op_types(op.types).operands[0]
    assert isinstance(a, MemDescType) and a.dialect == "tt"
    assert a.memory_space == "#triton_gpu.shared_memory" and a.memory_kind() == "shared"


def test_forms_of_real_ops():
    mod = module("3.9.0", "add_sm80", "ttgir")
    load = op_types(find_op(mod, "tt.load"))
    assert load.form == "single" and load.operands == load.results  # the documented approximation
    assert isinstance(load.operands[0].element, PointerType)
    assert load.operands[0].element == PointerType(ScalarType("f32", 32, "float"), 1)
    assert op_types(find_op(mod, "tt.store")).results == ()
    splat = op_types(find_op(mod, "tt.splat", "!tt.ptr"))
    assert splat.form == "arrow" and str(splat.operands[0]) == "!tt.ptr<f32>"
    assert splat.results[0].short() == "256xptr<f32>"
    addptr = op_types(find_op(mod, "tt.addptr"))
    assert addptr.form == "list" and len(addptr.operands) == 2 and addptr.results == ()
    reduce_ = op_types(find_op(module("3.9.0", "softmax_sm80", "ttgir"), "tt.reduce"))
    assert reduce_.form == "function" and str(reduce_.results[0]) == "f32"
    cast = op_types(find_op(mod, "arith.sitofp")) if any(o.name == "arith.sitofp" for o in mod.ops()) \
        else parse_op_types("i32 to f32")
    assert cast.form == "cast" and [str(t) for t in cast.operands + cast.results] == ["i32", "f32"]
    lc = op_types(find_op(module("3.9.0", "attn_sm80", "ttgir"), "ttg.local_alloc"))
    assert lc.form == "function" and isinstance(lc.results[0], MemDescType)


def test_llvm_dialect_ops():
    ops = [op for m in snapshot_modules() for op in m.ops() if op.name.startswith("llvm.")]
    gep = parse_op_types(next(op for op in ops if op.name == "llvm.getelementptr").types)
    assert gep.operands[0] == PointerType(None, 1, "llvm") and gep.extra == (ScalarType("f32", 32, "float"),)
    struct = parse_type("!llvm.struct<(ptr<1>, ptr<1>)>")
    assert struct == StructType((PointerType(None, 1, "llvm"),) * 2, flavor="llvm")
    assert str(struct) == "!llvm.struct<(ptr<1>, ptr<1>)>" and struct.short() == "struct<(ptr<1> x 2)>"
    glob = next(op for m in snapshot_modules() for op in m.globals if op.name == "llvm.mlir.global")
    assert parse_type(glob.types) == ArrayType(0, ScalarType("i8", 8, "int"), "llvm")
    asm = next(op for op in ops if op.name == "llvm.inline_asm" and "!llvm.void" in op.types)
    assert parse_op_types(asm.types).results == (VoidType("llvm"),)


# Every type text of every fixture: ops and arguments of TTIR/TTGIR, the pass dumps'
# snapshots (LLVM dialect included), and LLVM IR read from instruction text (the LLVM
# parser leaves Instruction.types empty).

_MODELLED = (TensorType, PointerType, MemDescType, ScalarType, VectorType, ArrayType, StructType,
             FunctionType, VoidType)


def _walk(t):
    yield t
    for name in ("element", "pointee"):
        sub = getattr(t, name, None)
        if sub is not None:
            yield from _walk(sub)
    for name in ("fields", "inputs", "results"):
        for sub in getattr(t, name, ()):
            yield from _walk(sub)


def _mlir_modules():
    return [m for s in ("ttir", "ttgir") for _, _, m in fixtures(s)] + snapshot_modules()


def test_every_mlir_type_text():
    texts, opaque, counted = set(), [], 0
    for m in _mlir_modules():
        for op in m.ops():
            texts.add(op.types)
        for fn in m.functions:
            texts.update(a.type for a in fn.args)
    for text in texts:
        ts = parse_op_types(text)
        for t in ts.operands + ts.results + ts.extra:
            counted += 1
            # printed back as written: nothing was dropped on the way
            assert str(t) == t.raw, (text, str(t))
            opaque += [s for s in _walk(t) if not isinstance(s, _MODELLED)]
    assert counted > 250
    assert opaque == []  # the fixtures hold no tensordesc/token/memref types


_LLIR_SKIP = {"tail", "musttail", "notail", "call", "fast", "nnan", "ninf", "nsz", "arcp",
              "contract", "afn", "reassoc", "nuw", "nsw", "exact", "disjoint", "nneg", "inbounds",
              "nusw", "samesign", "volatile", "eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge",
              "slt", "sle", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "une", "uno"}
_DEF_RE = re.compile(r"%[\w.$-]+ = ")


def llir_types(text: str) -> list[str]:
    """The type texts an LLVM IR instruction starts with (after opcode and flags),
    and the target of a cast: enough to see every type the fixtures print."""
    s = _DEF_RE.sub("", text.strip(), count=1).split(", !dbg")[0]
    words = s.split(" ")
    if words[0] in ("br", "ret", "unreachable") and len(words) > 1 and words[1] == "label":
        return []
    i = 1
    while i < len(words) and words[i] in _LLIR_SKIP:
        i += 1
    out = []
    t, rest = parse_leading_type(" ".join(words[i:]))
    if t is not None:
        out.append(t)
    if " to " in s:
        t2, _ = parse_leading_type(s.rsplit(" to ", 1)[1])
        out.append(t2)
    return out


def test_every_llvm_ir_type():
    seen = 0
    for _, _, m in fixtures("llir"):
        for fn in m.functions:
            for a in fn.args:  # 'ptr addrspace(1) nofree readnone captures(none)'
                t, rest = parse_leading_type(a.type)
                assert isinstance(t, (PointerType, ScalarType)), a.type
                assert rest in ("", "nofree readnone captures(none)", "readnone captures(none)")
            for op in fn.ops():
                for t in llir_types(op.text):
                    seen += 1
                    assert t is not None and all(isinstance(s, _MODELLED) for s in _walk(t)), op.text
    assert seen > 5000


def test_llvm_ir_golden():
    assert parse_type("ptr addrspace(3)") == PointerType(None, 3, "ir")
    assert parse_type("ptr") == PointerType(None, 0, "ir")
    assert parse_type("<4 x float>") == VectorType(4, ScalarType("float", 32, "float"), (), "ir")
    assert parse_type("[4 x i32]") == ArrayType(4, ScalarType("i32", 32, "int"))
    s = parse_type("{ float, float, ptr addrspace(1), i32 }")
    assert isinstance(s, StructType) and len(s.fields) == 4 and not s.packed
    assert s.short() == "struct<(float x 2, ptr<1>, i32)>"
    assert parse_type("<{ i8, i32 }>").packed
    assert parse_type("{}") == StructType(())
    assert parse_type("void") == VoidType()
    f = parse_type("i32 (ptr, ...)")
    assert isinstance(f, FunctionType) and f.variadic and str(f) == "i32 (ptr, ...)"
    assert parse_type("token") == TokenType("token")
    assert parse_type("half").bits == 16 and parse_type("bfloat").bits == 16
    assert parse_type("double") == ScalarType("double", 64, "float")
    assert parse_leading_type("float %3, %4") == (ScalarType("float", 32, "float"), "%3, %4")
    assert parse_leading_type("%3, %4") == (None, "%3, %4")


def test_shapes_the_fixtures_lack():
    t = parse_type("tensor<?x4xi32>")
    assert t.shape == (None, 4) and t.numel is None and t.rank == 2 and str(t) == "tensor<?x4xi32>"
    assert parse_type("tensor<f32>").shape == ()
    assert parse_type("tensor<128x64xf16, #blocked>").numel == 128 * 64
    m = parse_type("!ttg.memdesc<3x128x64xf16, #shared, #smem, mutable>")
    assert isinstance(m, MemDescType) and m.mutable and m.shape == (3, 128, 64) and m.alloc_shape == m.shape
    sub = parse_type("!ttg.memdesc<128x64xf16, #shared, #smem, mutable, 3x128x64>")
    assert sub.alloc_shape == (3, 128, 64) and str(sub) == "!ttg.memdesc<128x64xf16, #shared, #smem, mutable, 3x128x64>"
    tm = parse_type("!ttg.memdesc<128x128xf32, #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, "
                    "unpacked = true>, #ttng.tensor_memory, mutable>")
    assert tm.memory_space == "#ttng.tensor_memory" and tm.memory_kind() == "tensor"
    bar = parse_type("!ttg.memdesc<1xi64, #shared2, #smem, mutable>")
    assert bar.element == ScalarType("i64", 64, "int")
    assert parse_type("!triton_gpu.memdesc<16xf32, #shared, #triton_gpu.shared_memory>").dialect == "triton_gpu"
    assert parse_type("!tt.ptr<f16, 3>") == PointerType(ScalarType("f16", 16, "float"), 3)
    assert str(parse_type("!tt.ptr<f16, 3>")) == "!tt.ptr<f16, 3>"
    blk = parse_type("!tt.ptr<tensor<128x64xf16>>")
    assert isinstance(blk.pointee, TensorType)
    assert parse_type("!llvm.ptr") == PointerType(None, 0, "llvm")
    assert parse_type("vector<4xf32>") == VectorType(4, ScalarType("f32", 32, "float"), (4,))
    assert parse_type("!llvm.array<4 x i32>").count == 4
    assert parse_type("!llvm.struct<packed (i8, i32)>").packed
    named = parse_type('!llvm.struct<"s", (i32)>')
    assert named.name == "s" and str(named) == '!llvm.struct<"s", (i32)>'
    assert parse_op_types('(!llvm.struct<"a, b", (i32)>) -> i32').results == (ScalarType("i32", 32, "int"),)
    assert parse_type("!ttg.async.token") == TokenType("!ttg.async.token")
    for name, bits in (("f8E4M3FN", 8), ("f8E5M2", 8), ("bf16", 16), ("i1", 1), ("ui1", 1), ("f4E2M1FN", 4)):
        assert parse_type(name).bits == bits
    assert parse_type("index") == ScalarType("index", None, "index")
    f = parse_type("(i32, f32) -> (f32, i1)")
    assert isinstance(f, FunctionType) and len(f.inputs) == 2 and len(f.results) == 2
    assert str(f) == "(i32, f32) -> (f32, i1)" and str(parse_type("() -> ()")) == "() -> ()"
    ts = parse_op_types("(i32) -> (f32, f32)")
    assert ts.form == "function" and len(ts.results) == 2
    assert parse_op_types("tensor<4xf32>", num_results=2).results == (parse_type("tensor<4xf32>"),) * 2


def test_a_memdesc_printed_without_its_name():
    """Triton 3.6's async_copy_global_to_local prints its result memdesc as '<...>'
    (the attention sample's TTGIR, line 148): a memdesc all the same."""
    ts = parse_op_types("tensor<64x64x!tt.ptr<f16>, #blocked2> -> <64x64xf16, #shared1, #smem, mutable>")
    (m,) = ts.results
    assert isinstance(m, MemDescType) and m.shape == (64, 64) and m.encoding_ref == "#shared1"
    assert m.memory_space == "#smem" and m.mutable and m.dialect == "" and str(m) == m.raw
    # LLVM IR's vectors space their 'x'; a bare '<4xf32>' names no layout: neither is one
    assert isinstance(parse_type("<4 x float>"), VectorType)
    assert isinstance(parse_type("<4xf32>"), OpaqueType)


def test_left_opaque_on_purpose():
    for text in ("!tt.tensordesc<tensor<128x64xf16, #shared>>", "memref<4xf32>", "complex<f32>",
                 "tuple<i32, f32>", "label", "metadata", "!ttng.whatever", "<vscale x 4 x i32>", "",
                 "tensor<4x4>", "i32 i32", "tensor<4xf32"):
        assert isinstance(parse_type(text), OpaqueType), text
        assert parse_type(text).raw == text
    desc = parse_type("tensor<2x!tt.tensordesc<tensor<8xf16>>>")
    assert isinstance(desc, TensorType) and isinstance(desc.element, OpaqueType)


def test_type_aliases():
    aliases = {"!mytype": "tensor<4xf32, #blocked>", "#blocked": "#ttg.blocked<{order = [0]}>"}
    t = parse_type("!mytype", aliases)
    assert isinstance(t, TensorType) and t.encoding_ref == "#blocked"
    assert t.encoding_text(aliases) == "#ttg.blocked<{order = [0]}>"
    assert parse_op_types("!mytype -> !mytype", aliases).results == (t,)
    assert isinstance(parse_type("!mytype"), OpaqueType)  # without the table


def test_encoding_decodes():
    mod = module("3.9.0", "matmul_sm80", "ttgir")
    d = parse_op_types(find_op(mod, "tt.dot").types)
    for t in d.operands + d.results:
        assert t.encoding(mod.encodings) is not None
    assert parse_type("tensor<4xf32>").encoding() is None


def test_equality_and_caching():
    a, b = parse_type("tensor<4xf32,#blocked>"), parse_type("tensor<4xf32, #blocked>")
    assert a == b and hash(a) == hash(b) and a.raw != b.raw
    # spelling is not identity: the LLVM dialect mirrors LLVM IR
    assert parse_type("!llvm.ptr<1>") == parse_type("ptr addrspace(1)")
    assert str(parse_type("!llvm.ptr<1>")) == "!llvm.ptr<1>"
    assert parse_type("!llvm.struct<(ptr, i32)>").fields[0] == parse_type("!llvm.ptr")
    assert parse_type("tensor<4xf32>") is parse_type("tensor<4xf32>")  # memoised
    assert {parse_type("i32"), parse_type(" i32 ")} == {ScalarType("i32", 32, "int")}


PIECES = ["tensor<", "!tt.ptr<", "!ttg.memdesc<", "!llvm.struct<(", "<", ">", "(", ")", "[", "]",
          "{", "}", ",", " x ", "x", "?", "->", " to ", " * ", '"', "#blocked", "f32", "ptr",
          "addrspace(", "mutable", "...", "!llvm.", "vector<", "4", " ", "\\"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14), st.text(max_size=20))
def test_garbled_text_never_raises(pieces, noise):
    for text in ("".join(pieces), "".join(pieces) + noise, noise):
        assert parse_type(text) is not None
        parse_leading_type(text)
        parse_op_types(text, {"!a": "!a"})  # a self-referencing alias stops too


def test_deep_nesting_never_raises():
    deep = "tensor<4x" * 500 + "f32" + ">" * 500
    assert isinstance(parse_type(deep), OpaqueType)
    assert isinstance(parse_type("(" * 2000), OpaqueType)


def _fields_deep(t):
    """Every field of a type, nested types and ``raw`` (not compared by ==) included."""
    import dataclasses

    if not dataclasses.is_dataclass(t):
        return t
    return (type(t).__name__,) + tuple(_fields_deep(getattr(t, f.name)) if not isinstance(getattr(t, f.name), tuple)
                                       else tuple(_fields_deep(x) for x in getattr(t, f.name))
                                       for f in dataclasses.fields(t))


def _every_type_text() -> list[str]:
    from irscope.ir import bracket_scan

    texts = set()
    for m in _mlir_modules():
        for op in m.ops():
            texts.update(bracket_scan.split_top(op.types.replace("->", ",")))
    return sorted(texts)


FIXTURE_TYPES = _every_type_text()


def test_fast_type_reader_agrees_with_the_descent_on_every_fixture_type():
    from irscope.ir import type_parser

    fast = 0
    for text in FIXTURE_TYPES:
        got = type_parser._fast(text)
        if got is not None:
            fast += 1
            assert _fields_deep(got) == _fields_deep(type_parser._parse_general(text)), text
    assert fast > 100


@settings(max_examples=500, deadline=None)
@given(st.sampled_from([t for t in FIXTURE_TYPES if t.startswith(("tensor<", "!ttg.memdesc<", "<"))]),
       st.lists(st.tuples(st.integers(0, 80), st.sampled_from(
           ["x", "4x", "?x", "<", ">", ",", ", ", " ", "#", "{", "}", "!tt.ptr<", "f8E4M3FN", "mutable", '"', "->",
            "#smem", "#ttg.shared_memory", "_", "$", ".", "(", ")", "[", "]", "é", "\u0663"])), max_size=4))
def test_fast_type_reader_agrees_with_the_descent_on_garbled_types(text, edits):
    from irscope.ir import type_parser

    for pos, piece in edits:
        text = text[:pos] + piece + text[pos:]
    got = type_parser._fast(text)
    if got is not None:
        assert _fields_deep(got) == _fields_deep(type_parser._parse_general(text)), text


def _op_type_texts() -> list[str]:
    return sorted({op.types for m in _mlir_modules() for op in m.ops()})


OP_TYPE_TEXTS = _op_type_texts()


def _op_types_deep(ts):
    return (tuple(map(_fields_deep, ts.operands)), tuple(map(_fields_deep, ts.results)), ts.raw, ts.form,
            tuple(map(_fields_deep, ts.extra)))


def test_fast_op_types_agree_with_the_general_reader_on_every_fixture_op():
    from irscope.ir import op_types as ot

    fast = 0
    for text in OP_TYPE_TEXTS:
        for n in (None, 0, 1, 2):
            assert _op_types_deep(ot._op_types_raw(text, n)) == _op_types_deep(ot._op_types_general(text, n)), text
        fast += any(r.fullmatch(text) is not None for r in (ot._FAST_RE, ot._FAST_LIST_RE, ot._FAST_FUNCTION_RE,
                                                              ot._FAST_CAST_RE, ot._FAST_DOT_RE))
    assert fast > len(OP_TYPE_TEXTS) // 2


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(OP_TYPE_TEXTS), st.lists(st.tuples(st.integers(0, 120), st.sampled_from(
    ["x", ", ", ",", " -> ", "->", " to ", " * ", "(", ")", "<", ">", "!tt.ptr<", "tensor<4x", "i32", " ", "#a",
     "{", "}", ", !ttg.async.token", "!a.b", "<64x64xf16, #s, #smem>", "é", "\u0663"])), max_size=4), st.sampled_from([None, 0, 1, 3]))
def test_fast_op_types_agree_with_the_general_reader_on_garbled_text(text, edits, n):
    from irscope.ir import op_types as ot

    for pos, piece in edits:
        text = text[:pos] + piece + text[pos:]
    assert _op_types_deep(ot._op_types_raw(text, n)) == _op_types_deep(ot._op_types_general(text, n)), text
