"""Classifying through a line template is exact: the same tuple as classifying the
line itself, for every line of every real fixture (and for garbled ones)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from irscope.ir import llvm, mlir
from irscope.ir.forms import normalise_op_text

DATA = Path(__file__).parent / "data" / "ir"


def _lines(suffixes: tuple[str, ...]) -> list[str]:
    out: set[str] = set()
    for path in sorted(DATA.rglob("*")):
        if path.is_file() and path.name.endswith(suffixes):
            out.update(path.read_text(errors="replace").split("\n"))
    return sorted(out)


MLIR_LINES = _lines((".ttir", ".ttgir", "mlir_passes.txt"))
LLVM_LINES = _lines((".llir", "llvm_passes.txt"))


def _same(got: tuple, want: tuple, line: str, kind: int) -> None:
    """Templated == direct, except the form (last field of an op), which direct
    classification leaves empty and the template fills: it must be the line's own."""
    if want[0] == kind:
        assert got[:-1] == want[:-1], line
        assert want[-1] == "" and got[-1] == normalise_op_text(line.strip()), line
    else:
        assert got == want, line


def _check(lines, classify_new, classify_direct, form_index, kind):
    shapes: dict = {}
    for line in lines:
        _same(classify_new(line, shapes), classify_direct(line), line, kind)
    return shapes


def test_mlir_template_is_exact_on_every_fixture_line():
    assert len(MLIR_LINES) > 5000
    shapes = _check(MLIR_LINES, mlir._classify_new, mlir._classify_safe, 11, mlir.K_OP)
    assert len(shapes) < len(MLIR_LINES) / 2  # and it does share work


def test_llvm_template_is_exact_on_every_fixture_line():
    assert len(LLVM_LINES) > 5000
    shapes = _check(LLVM_LINES, llvm._classify_new, lambda s: llvm._safe(llvm.classify, s), 7,
                    llvm.L_INSTR)
    assert len(shapes) < len(LLVM_LINES) / 2


_GARBLE = st.sampled_from(["%", "%0", "%12#1", "#loc", "#loc3", "^bb1", "!7", "!dbg !3", " ", "(", ")",
                           "{", "}", '"', ":", " = ", "loc(", ",", "#loc9 at #loc2"])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(MLIR_LINES[:4000] or [""]), st.lists(st.tuples(st.integers(0, 200), _GARBLE), max_size=4))
def test_mlir_template_exact_on_garbled_lines(line, edits):
    for pos, piece in edits:
        line = line[:pos] + piece + line[pos:]
    _same(mlir._classify_new(line, {}), mlir._classify_safe(line), line, mlir.K_OP)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(LLVM_LINES[:4000] or [""]), st.lists(st.tuples(st.integers(0, 200), _GARBLE), max_size=4))
def test_llvm_template_exact_on_garbled_lines(line, edits):
    for pos, piece in edits:
        line = line[:pos] + piece + line[pos:]
    _same(llvm._classify_new(line, {}), llvm._safe(llvm.classify, line), line, llvm.L_INSTR)


@pytest.mark.parametrize("a,b", [
    ("%12 = arith.addi %10, %11 : i32 loc(#loc3)", "%7 = arith.addi %a, %b : i32 loc(#loc12)"),
    ("  %5 = fadd float %3, %4, !dbg !12", "  %9 = fadd float %1, %2, !dbg !40"),
])
def test_renamed_lines_share_one_shape_and_form(a, b):
    classify = mlir._classify_new if "arith" in a else llvm._classify_new
    shapes: dict = {}
    ta, tb = classify(a, shapes), classify(b, shapes)
    assert len(shapes) == 1
    assert ta != tb and ta[-1] == tb[-1]


def _fixture_texts():
    for path in sorted(DATA.rglob("*")):
        if not path.is_file():
            continue
        if path.suffix in (".ttir", ".ttgir", ".llir", ".ptx", ".sass"):
            yield path.suffix[1:], path
        elif path.name == "mlir_passes.txt":
            yield "mlir", path
        elif path.name == "llvm_passes.txt":
            yield "llir", path


@pytest.mark.parametrize("stage,path", list(_fixture_texts()), ids=lambda v: str(v)[-40:])
def test_op_forms_equal_the_full_parse(stage, path):
    """The tree-free scan gives exactly the ops (name, form) of the full parse."""
    from irscope.ir import ParseCache, op_form, op_forms, parse_stage

    text = path.read_text(errors="replace")
    cache = ParseCache()
    want = [(op.name, op_form(op)) for op in parse_stage(stage, text, cache).ops()
            if op.name != "<unknown>" and op.name]
    assert want
    assert op_forms(stage, text, cache) == want
    assert op_forms(stage, text, ParseCache()) == want  # cold memo too
    for n in (1, 7, 40):  # truncated text
        cut = text[: len(text) * n // 50]
        assert op_forms(stage, cut, cache) == [(op.name, op_form(op)) for op in parse_stage(stage, cut).ops()
                                               if op.name != "<unknown>" and op.name]


def test_a_name_used_twice_keeps_its_identity_in_the_template():
    # found by the garbled-line property: the def %0 must also drop the operand %0
    line = "        %68 = a%0%0 = rith.addf %arg14, %arg15 : f32 loc(#loc63)"
    _same(mlir._classify_new(line, {}), mlir._classify_safe(line), line, mlir.K_OP)
