"""Property tests: no parser raises on truncated or garbled real input, and what they
return stays well-formed."""

from __future__ import annotations

import os
from pathlib import Path

import irscope
from irscope import text_guard
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irscope.ir import parse_guard
from irscope.ir import (Frame, Function, Location, Module, ParseCache, parse_snapshots,
                        parse_stage, split_llvm_pass_dump, split_mlir_pass_dump,
                        split_pass_dump)

DATA = Path(__file__).parent / "data" / "ir"
CASE = DATA / "3.6.0" / "helper_sm80"
TEXTS = {
    "ttir": (CASE / "helper_kernel.ttir").read_text(),
    "ttgir": (DATA / "3.9.0" / "attn_sm90" / "attn_kernel.ttgir").read_text(),
    "llir": (CASE / "helper_kernel.llir").read_text(),
    "ptx": (CASE / "helper_kernel.ptx").read_text(),
    "sass": (DATA / "3.9.0" / "attn_sm90" / "attn_kernel.sass").read_text(),
}
with irscope.open(str(DATA.parent / "layer_norm_gfx942.irscope")) as _bundle:  # gfx942: AMDGCN
    TEXTS["amdgcn"] = _bundle.captures()[0].stage("amdgcn").text
# The head of real streams: a few snapshots each (keeps every example fast).
MLIR_STREAM = (CASE / "mlir_passes.txt").read_text()[:40_000]
LLVM_STREAM = (DATA / "3.6.0" / "add_sm80" / "llvm_passes.txt").read_text()
LLVM_STREAM = LLVM_STREAM[:20_000] + LLVM_STREAM[-30_000:]  # IR and MIR dumps

# IR_PROPS_EXAMPLES=2000 for a longer hunt.
SETTINGS = settings(max_examples=int(os.environ.get("IR_PROPS_EXAMPLES", "40")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# Fragments of IR syntax, so that junk often looks almost right.
JUNK = st.lists(st.sampled_from(list('%#^{}()<>[]":;,=@!$.\n \t\\\x00é01') + [
    "loc(", "#loc1", "\n}", "{\n", " = ", "tt.func @f(", "module {", "^bb0(", "%0 = ",
    "callsite(", " at ", "fused[", "!dbg !7", "define void @f() {", ".loc 1 2 3",
    ".entry k(", "/*0010*/ ", "//## File \"a\", line 3", " : ", "-> ", "@%p1 "]),
    max_size=12).map("".join)


@pytest.fixture(autouse=True, scope="module")
def strict():
    """Let a parser bug raise here instead of degrading to an all-unknown result."""
    text_guard.STRICT = True
    yield
    text_guard.STRICT = False


def check(mod: Module, text: str) -> None:
    """The invariants every parse result keeps, whatever the input."""
    n_lines = text.count("\n") + 1
    assert isinstance(mod, Module)
    assert 0.0 <= mod.coverage <= 1.0
    assert 0 <= mod.understood_lines <= mod.total_lines <= n_lines
    for line, _ in mod.unknown:
        assert 1 <= line <= n_lines
    prev = 0
    for op in mod.ops():
        assert 1 <= op.line <= n_lines and op.line >= prev
        assert op.line <= max(op.end_line, op.line) <= n_lines
        assert isinstance(op.location, Location)
        assert all(isinstance(f, Frame) and isinstance(f.line, int) for f in op.location.frames)
        assert isinstance(op.text, str) and isinstance(op.name, str) and op.name
        prev = op.line
    for fn in mod.functions:
        assert isinstance(fn, Function) and 1 <= fn.line <= n_lines
        for block in fn.blocks:
            for op in block.ops:
                assert op.parent is fn or op.parent is not None


def garble(data, text: str) -> str:
    """Apply a few random line- and character-level edits to ``text``."""
    lines = text.split("\n")
    for _ in range(data.draw(st.integers(1, 6))):
        kind = data.draw(st.sampled_from(["del", "dup", "swap", "junk", "cut", "char"]))
        i = data.draw(st.integers(0, len(lines) - 1))
        if kind == "del" and len(lines) > 1:
            del lines[i]
        elif kind == "dup":
            lines.insert(i, lines[data.draw(st.integers(0, len(lines) - 1))])
        elif kind == "swap":
            j = data.draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "junk":
            lines.insert(i, data.draw(JUNK))
        elif kind == "cut":
            k = data.draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:k]
        else:
            k = data.draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:k] + data.draw(JUNK) + lines[i][k + 1:]
    return "\n".join(lines)


@pytest.mark.parametrize("stage", sorted(TEXTS))
@SETTINGS
@given(data=st.data())
def test_any_prefix(stage, data):
    text = TEXTS[stage]
    cut = data.draw(st.integers(0, len(text)))
    check(parse_stage(stage, text[:cut]), text[:cut])


@pytest.mark.parametrize("stage", sorted(TEXTS))
@SETTINGS
@given(data=st.data())
def test_garbled(stage, data):
    text = garble(data, TEXTS[stage])
    check(parse_stage(stage, text), text)
    # a shared cache must give the same answers as a fresh one
    cache = ParseCache()
    parse_stage(stage, TEXTS[stage], cache)
    again = parse_stage(stage, text, cache)
    assert again.coverage == parse_stage(stage, text).coverage


@pytest.mark.parametrize("stage", sorted(TEXTS))
@SETTINGS
@given(junk=st.text(max_size=200))
def test_arbitrary_text(stage, junk):
    check(parse_stage(stage, junk), junk)


def check_dump(dump, text: str) -> None:
    n_lines = text.count("\n") + 1
    for i, snap in enumerate(dump):
        assert snap.index == i and 1 <= snap.line_offset <= n_lines
        assert all(0 <= s <= e <= len(text) for s, e in snap.spans)
        assert snap.kind in ("before", "after", "after-failed", "internal", "unknown")
        assert isinstance(snap.text, str)
    for line, _ in dump.other:
        assert 1 <= line <= n_lines


@SETTINGS
@given(data=st.data())
def test_pass_dumps_garbled(data):
    for splitter, stream in ((split_mlir_pass_dump, MLIR_STREAM),
                             (split_llvm_pass_dump, LLVM_STREAM)):
        cut = data.draw(st.integers(0, len(stream)))
        for text in (stream[:cut], garble(data, stream)):
            dump = splitter(text)
            check_dump(dump, text)
            for snap, mod in zip(dump, parse_snapshots(dump)):
                check(mod, snap.text)


@SETTINGS
@given(junk=st.text(max_size=300))
def test_split_arbitrary_text(junk):
    text = "// -----// IR Dump Before X (x) ('builtin.module' operation) //----- //\n" + junk
    check_dump(split_pass_dump(text), text)
    text = "; *** IR Dump After X on f ***\n" + junk
    check_dump(split_pass_dump(text), text)


def _op_rows(mod: Module) -> list[tuple]:
    from irscope.ir import op_form

    return [(op.name, op.results, op.operands, op.types, op.attributes, op.loc_ref, op.line, op.text,
             op_form(op)) for op in mod.ops()]


@pytest.mark.parametrize("stage", ["ttir", "ttgir", "llir"])
@SETTINGS
@given(data=st.data())
def test_templates_and_forms_agree_with_the_direct_parse_on_garbled_text(stage, data):
    """Snapshots are parsed through line templates, and summarised from name-erased
    text; on any text both must give what the direct parse of a stage file gives."""
    from irscope.ir import op_form, op_forms, parse_llvm

    text = garble(data, TEXTS[stage])
    direct = parse_stage(stage, text)
    # parsed as a snapshot (stage "mlir" / "llvm"): through line templates
    templated = (parse_llvm(text, "llvm", ParseCache()) if stage == "llir"
                 else parse_stage("mlir", text, ParseCache()))
    assert _op_rows(templated) == _op_rows(direct)
    want = [(op.name, op_form(op)) for op in direct.ops() if op.name != "<unknown>" and op.name]
    assert op_forms(stage, text) == want
    assert op_forms(stage, text, ParseCache()) == want
