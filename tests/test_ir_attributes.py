"""Parsed attributes (:mod:`irscope.ir.attributes`): golden checks on real fixture
ops, every attribute text of every fixture typed, the shapes the fixtures lack, and
garbled text never raising."""

from __future__ import annotations

import math
import re
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from irscope import text_guard
from irscope.ir import parse_snapshots, parse_stage, split_pass_dump
from irscope.ir.attributes import (ArrayAttr, BoolAttr, DenseAttr, DictAttr, FloatAttr, IntAttr,
                                   RawAttr, StringAttr, TypeAttr, UnitAttr, parse_attr_value,
                                   parse_attributes)
from irscope.ir.types import ScalarType, TensorType, parse_type

DATA = Path(__file__).parent / "data" / "ir"
VERSIONS = ("3.2.0", "3.6.0", "3.9.0")
I32 = ScalarType("i32", 32, "int")


@pytest.fixture(autouse=True)
def strict(monkeypatch):
    monkeypatch.setattr(text_guard, "STRICT", True)


@cache
def module(version: str, case: str, stage: str):
    return parse_stage(stage, next((DATA / version / case).glob(f"*.{stage}")).read_text())


@cache
def all_modules():
    stages = [parse_stage(p.suffix[1:], p.read_text()) for v in VERSIONS
              for s in ("ttir", "ttgir") for p in sorted((DATA / v).glob(f"*/*.{s}"))]
    return stages + [m for p in sorted(DATA.glob("*/*/mlir_passes.txt"))
                     for m in parse_snapshots(split_pass_dump(p.read_text()))]


def find_op(mod, name: str):
    return next(op for op in mod.ops() if op.name == name)


def test_reduce_and_make_range():
    mod = module("3.9.0", "softmax_sm80", "ttgir")
    axes = {parse_attributes(op.attributes)["axis"] for op in mod.ops() if op.name == "tt.reduce"}
    assert axes == {IntAttr(0, I32)}
    rng = parse_attributes(find_op(mod, "tt.make_range").attributes)
    assert {k: v.value for k, v in rng.items()} == {"end": 256, "start": 0}
    assert rng["end"].type == I32 and rng["end"].raw == "256 : i32"


def test_warp_group_dot_attributes():
    op = find_op(module("3.9.0", "matmul_sm90", "ttgir"), "ttng.warp_group_dot")
    d = parse_attributes(op.attributes)
    assert d == {"inputPrecision": IntAttr(0, I32), "isAsync": BoolAttr(True)}


def test_module_attributes():
    d = parse_attributes(module("3.9.0", "matmul_sm90", "ttgir").attributes)
    assert d["ttg.num-warps"] == IntAttr(4, I32)
    assert d["ttg.target"] == StringAttr("cuda:90")
    assert d["ttng.two-ctas"] == BoolAttr(False)
    old = parse_attributes(module("3.2.0", "matmul_sm80", "ttgir").attributes)
    assert old["triton_gpu.num-warps"].value == 4 and old["triton_gpu.target"].value == "cuda:80"
    text = "module attributes " + module("3.6.0", "add_sm80", "ttgir").attributes
    assert parse_attributes(text)["ttg.threads-per-warp"].value == 32


def test_function_attributes():
    fn = module("3.9.0", "add_sm80", "ttgir").functions[0]
    assert parse_attributes(fn.attributes) == {"noinline": BoolAttr(False)}
    # argument attributes, as the header prints them
    args = re.findall(r"\{tt\.[^{}]*\}", fn.text)
    assert args and all(parse_attributes(a) == {"tt.divisibility": IntAttr(16, I32)} for a in args)
    llvm_fn = next(fn for m in all_modules() for fn in m.functions
                   if fn.kind == "llvm.func" and "nvvm.reqntid" in fn.attributes)
    d = parse_attributes(llvm_fn.attributes)
    assert d["nvvm.reqntid"] == ArrayAttr((IntAttr(128, I32),), I32)
    assert d["nvvm.reqntid"].value == [128]
    assert d["nvvm.kernel"] == IntAttr(1, ScalarType("ui1", 1, "int"))
    arg = next(m.group() for m in (re.search(r"\{tt\.divisibility = 16 : i32, tt\.pointee_type = f32\}", fn.text)
                                   for m_ in all_modules() for fn in m_.functions) if m)
    assert parse_attributes(arg)["tt.pointee_type"] == TypeAttr(ScalarType("f32", 32, "float"))
    # LLVM IR function attributes are not an MLIR dictionary
    assert parse_attributes(module("3.9.0", "add_sm80", "llir").functions[0].attributes) == {}


def test_constants_of_the_fixtures():
    """The values ``arith.constant`` / ``llvm.mlir.constant`` print (custom syntax,
    so not in Op.attributes): every one is typed."""
    seen = {}
    for m in all_modules():
        for op in m.ops():
            if op.name == "arith.constant":
                text = op.text.strip().split("arith.constant ", 1)[1].rsplit(" loc(", 1)[0]
            elif op.name == "llvm.mlir.constant":
                text = op.text.split("llvm.mlir.constant(", 1)[1].rsplit(") : ", 1)[0]
            else:
                continue
            seen[text] = parse_attr_value(text)
    assert len(seen) > 30
    assert [t for t, v in seen.items() if isinstance(v, RawAttr)] == []
    neg_inf = seen["dense<0xFF800000> : tensor<256xf32, #blocked>"]
    assert isinstance(neg_inf, DenseAttr) and neg_inf.splat and neg_inf.value == -math.inf
    assert isinstance(neg_inf.type, TensorType) and neg_inf.type.encoding_ref == "#blocked"
    assert seen["dense<2147483647> : tensor<256xi64>"].value == 2147483647
    assert seen["0.000000e+00 : f32"] == FloatAttr(0.0, ScalarType("f32", 32, "float"))
    assert seen["0 : index"] == IntAttr(0, ScalarType("index", None, "index"))
    assert seen["true"] == BoolAttr(True)


def test_every_fixture_attribute_text():
    texts = set()
    for m in all_modules():
        texts.add(m.attributes)
        texts.update(op.attributes for op in m.ops())
        texts.update(fn.attributes for fn in m.functions)
    values = [v for t in texts for v in parse_attributes(t).values()]
    assert len(values) > 100
    # the fixtures print nothing this module leaves raw (no encodings or enums in
    # attribute dictionaries: Triton prints those in custom syntax)
    assert [v for v in values if isinstance(v, RawAttr)] == []
    assert {type(v) for v in values} >= {IntAttr, BoolAttr, StringAttr, ArrayAttr, UnitAttr}


def test_the_forms():
    d = parse_attributes('{a = 1 : i32, b, c = "s", d = [1, 2], e = dense<0.0> : tensor<4xf32>, '
                         'f = true, g = 1.5 : f32, h = #ttg.blocked<{sizePerThread = [1], order = [0]}>, '
                         'tt.divisibility = 16 : i32}')
    assert {k: v.value for k, v in d.items()} == {
        "a": 1, "b": True, "c": "s", "d": [1, 2], "e": 0.0, "f": True, "g": 1.5,
        "h": "#ttg.blocked<{sizePerThread = [1], order = [0]}>", "tt.divisibility": 16}
    assert isinstance(d["b"], UnitAttr) and isinstance(d["h"], RawAttr)
    assert d["d"] == ArrayAttr((IntAttr(1), IntAttr(2)))
    assert d["e"].type == parse_type("tensor<4xf32>") and d["e"].splat
    assert parse_attributes("<{axis = 0 : i32}>") == {"axis": IntAttr(0, I32)}
    assert parse_attributes("{}") == {} and parse_attributes("") == {}


def test_values_the_fixtures_lack():
    v = parse_attr_value
    assert v("dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>").value == [[1, 2], [3, 4]]
    assert v("dense<[1.0, 2.5]> : tensor<2xf32>").value == [1.0, 2.5]
    assert v("dense<true> : tensor<4xi1>").value is True
    assert v("dense<1> : tensor<4xf32>").value == 1.0  # an int literal of a float tensor
    assert isinstance(v('dense<"0xDEADBEEF"> : tensor<2xi16>'), RawAttr)  # hex blobs stay raw
    assert v("array<f32: 1.0, 2.0>").value == [1.0, 2.0]
    assert v("array<i32>") == ArrayAttr((), I32)
    assert v("0x7FC00000 : f32").value != v("0x7FC00000 : f32").value  # nan
    assert v("0x3C00 : f16").value == 1.0 and v("0x3F80 : bf16").value == 1.0
    assert v("0x10 : i64").value == 16
    assert v("-1").value == -1 and v("-1").type is None
    assert v("1.0e+03 : f64").value == 1000.0
    assert v(r'"a\22b\0Ac\\d"').value == 'a"b\nc\\d'
    assert v('"caf\\C3\\A9"').value == "café"
    assert v("[]") == ArrayAttr(())
    assert v("[[1], [#a]]").value == [[1], ["#a"]]
    assert v("{llvm.noalias, align = 16 : i64}") == DictAttr((("llvm.noalias", UnitAttr("llvm.noalias")),
                                                             ("align", IntAttr(16, ScalarType("i64", 64, "int")))))
    assert v("[{}, {llvm.noalias}]").value == [{}, {"llvm.noalias": True}]
    assert isinstance(v("(i32, f32) -> ()"), TypeAttr)
    assert isinstance(v("tensor<4xf32>"), TypeAttr)
    for raw in ("@foo", "@a::@b", "#arith.fastmath<none>", "affine_map<(d0) -> (d0)>", "#loc3",
                "#llvm.linkage<external>", "loc(unknown)", "foo bar", "1 : !weird.type", '"unclosed'):
        assert isinstance(v(raw), RawAttr) and v(raw).value == raw, raw
    assert parse_attributes('{sym_name = "k", "quoted key" = 1, k = -2 : i8}')["quoted key"].value == 1
    assert parse_attributes("{a = 1, a = 2}")["a"].value == 2  # the last one wins
    assert parse_attributes("{= 1, a b}") == {"= 1": RawAttr("= 1"), "a b": RawAttr("a b")}


def test_frozen_and_cached():
    a = parse_attributes("{axis = 0 : i32}")
    a["axis"] = None  # the caller's copy; the cache is not touched
    assert parse_attributes("{axis = 0 : i32}") == {"axis": IntAttr(0, I32)}
    with pytest.raises(AttributeError):
        IntAttr(1).value = 2  # type: ignore[misc]


PIECES = ["{", "}", "<{", "}>", "[", "]", "<", ">", "(", ")", ",", " = ", "=", " : ", ":", '"',
          "\\", "\\2", "a", "tt.x", "1", "-", "0x", "1.5", "e+", "dense<", "array<i32: ", "i32",
          "f32", "f16", "tensor<4xf32>", "true", "#x<", "@f", " ", "module attributes "]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=16), st.text(max_size=20))
def test_garbled_text_never_raises(pieces, noise):
    for text in ("".join(pieces), "{" + "".join(pieces) + noise + "}", noise):
        for value in parse_attributes(text).values():
            value.value, value.raw  # every value answers both
        parse_attr_value(text).value


def test_deep_nesting_never_raises():
    assert isinstance(parse_attr_value("[" * 3000 + "]" * 3000), (ArrayAttr, RawAttr))
    assert isinstance(parse_attr_value("dense<" + "[" * 100 + "1" + "]" * 100 + ">"), (DenseAttr, RawAttr))
    parse_attributes("{a = " + "{b = " * 1000 + "1" + "}" * 1000 + "}")
