"""The structural diff engine on real captured texts (tests/data/ir: Triton 3.2, 3.6 and
3.9, sm_80 and sm_90): renaming is no change; swapped operands, an inserted op, an
edited layout and a moved op are exactly the changes reported."""

import re
from pathlib import Path

import pytest

from irscope.irdiff.engine import diff_modules
from irscope.ir import parse_stage

DATA = Path(__file__).parent / "data" / "ir"
MLIR_CASES = [(v, case, ext) for v in ("3.6.0", "3.9.0") for case in ("matmul_sm90", "attn_sm90", "softmax_sm80")
              for ext in ("ttir", "ttgir")] + [("3.2.0", "attn_sm80", "ttgir")]


def _text(version, case, ext):
    return next((DATA / version / case).glob(f"*.{ext}")).read_text()


def _diff(a: str, b: str, stage: str):
    return diff_modules(parse_stage(stage, a), parse_stage(stage, b), stage)


def rename_mlir(text: str) -> str:
    """Every SSA value, #loc alias and encoding alias renamed; alias lines reordered."""
    text = re.sub(r"%([A-Za-z_][\w$.]*|\d+)", lambda m: "%v_" + m.group(1).replace(".", "_"), text)
    text = re.sub(r"#loc(\d*)\b", lambda m: "#where" + (m.group(1) or "0"), text)
    aliases = re.findall(r"^(#(?!where)[A-Za-z_][\w]*) = ", text, re.M)
    for i, name in enumerate(sorted(aliases, key=len, reverse=True)):
        text = re.sub(re.escape(name) + r"(?![\w])", f"#lay{i}x", text)
    lines = text.split("\n")
    head = [ln for ln in lines if re.match(r"#lay\d+x = ", ln)]
    locs = [ln for ln in lines if re.match(r"#where\d+ = ", ln)]
    body = [ln for ln in lines if ln not in head and ln not in locs]
    return "\n".join(head[::-1] + body + locs[::-1])


@pytest.mark.parametrize("version,case,ext", MLIR_CASES)
def test_renamed_copy_is_unchanged(version, case, ext):
    text = _text(version, case, ext)
    copy = rename_mlir(text)
    assert copy != text and "#loc" not in copy
    d = _diff(text, copy, ext)
    assert d.changes == () and d.matched == sum(1 for op in parse_stage(ext, text).ops() if op.name != "<unknown>") > 20


def test_renamed_llvm_ir_and_ptx_are_unchanged():
    llir = _text("3.6.0", "attn_sm90", "llir")
    renamed = re.sub(r"%(\d+)\b", lambda m: f"%{int(m.group(1)) + 1000}", llir)
    renamed = re.sub(r"^(\d+):", lambda m: f"{int(m.group(1)) + 1000}:", renamed, flags=re.M)
    renamed = re.sub(r"!(\d+)\b", lambda m: f"!{int(m.group(1)) + 500}", renamed)
    d = _diff(llir, renamed, "llir")
    assert d.changes == () and d.matched > 500
    ptx = _text("3.6.0", "matmul_sm90", "ptx")
    renamed = re.sub(r"%(r|rd|f|p|rs|hh|h)(\d+)\b", lambda m: f"%{m.group(1)}{int(m.group(2)) + 900}", ptx)
    d = _diff(ptx, renamed, "ptx")
    assert d.changes == () and d.matched > 400


@pytest.mark.parametrize("version,case", [("3.6.0", "softmax_sm80"), ("3.6.0", "attn_sm90"), ("3.9.0", "attn_sm80")])
def test_swapped_subf_operands_are_one_changed_op(version, case):
    text = _text(version, case, "ttgir")
    m = re.search(r"(arith\.subf )(%[\w#]+), (%[\w#]+)", text)
    swapped = text[:m.start()] + f"{m.group(1)}{m.group(3)}, {m.group(2)}" + text[m.end():]
    d = _diff(text, rename_mlir(swapped), "ttgir")
    assert [(c.kind, c.op) for c in d.changes] == [("changed", "arith.subf")]
    assert d.changes[0].details[0].startswith("operands: ") and d.changes[0].python_line


@pytest.mark.parametrize("version,case,ext", MLIR_CASES[:6])
def test_one_inserted_op_is_one_added_op(version, case, ext):
    text = _text(version, case, ext)
    lines = text.split("\n")
    k = next(i for i, ln in enumerate(lines) if re.match(r"\s+%\S+ = arith\.(muli|addi|constant)", ln))
    extra = re.sub(r"%\S+ =", "%inserted_one =", lines[k], count=1)
    d = _diff(text, "\n".join(lines[:k + 1] + [extra] + lines[k + 1:]), ext)
    assert [(c.kind, c.after.text.split(" =")[0]) for c in d.changes] == [("added", "%inserted_one")]


@pytest.mark.parametrize("version,case", [("3.6.0", "matmul_sm90"), ("3.6.0", "softmax_sm80"), ("3.9.0", "attn_sm90")])
def test_edited_size_per_thread_is_that_layout_change(version, case):
    text = _text(version, case, "ttgir")
    m = re.search(r"^(#\w+) = #ttg\.blocked<\{sizePerThread = \[([\d, ]+)\]", text, re.M)
    old = m.group(2)
    sizes = [int(x) for x in old.split(", ")]
    sizes[-1] = sizes[-1] * 2
    new = ", ".join(map(str, sizes))
    edited = text[:m.start(2)] + new + text[m.end(2):]
    d = _diff(text, rename_mlir(edited), "ttgir")
    assert len(d.changes) == 1, [c.to_json() for c in d.changes]
    c = d.changes[0]
    assert c.kind == "changed" and c.before.name == m.group(1)
    assert c.details == (f"layout: sizePerThread [{old}] -> [{new}]",)


def test_swapped_independent_ops_are_a_move():
    text = _text("3.6.0", "matmul_sm90", "ttgir")
    lines = text.split("\n")
    # two neighbouring constants: neither uses the other
    k = next(i for i, ln in enumerate(lines) if "arith.constant" in ln and "arith.constant" in lines[i + 1]
             and lines[i].split("=", 1)[1] != lines[i + 1].split("=", 1)[1])
    lines[k], lines[k + 1] = lines[k + 1], lines[k]
    d = _diff(text, "\n".join(lines), "ttgir")
    assert [c.kind for c in d.changes] == ["moved"] and d.changes[0].op == "arith.constant"


def test_rewired_operand_is_a_change():
    text = _text("3.6.0", "softmax_sm80", "ttgir")
    m = re.search(r"(%x_7 = arith\.subf %x_4, )(%x_6)", text)
    rewired = text[:m.start(2)] + "%x_4" + text[m.end(2):]  # subf x, x: same key, other dataflow
    d = _diff(text, rewired, "ttgir")
    assert [(c.kind, c.op) for c in d.changes] == [("changed", "arith.subf")]
    assert d.changes[0].details == ("operands: %x_4, %x_6 -> %x_4, %x_4",)


def test_real_version_differences():
    """Triton 3.6 -> 3.9, matmul on sm_90: checked by hand once. TTGIR differs only in
    where two terminators are located (3.9 places them elsewhere); LLVM IR in the
    getelementptr element type (half -> [2 x i8], LLVM's canonical form in 3.9)."""
    a = {s: _text("3.6.0", "matmul_sm90", s) for s in ("ttgir", "llir")}
    b = {s: _text("3.9.0", "matmul_sm90", s) for s in ("ttgir", "llir")}
    t = _diff(a["ttgir"], b["ttgir"], "ttgir")
    assert [(c.kind, c.op, c.details) for c in t.changes] == [
        ("changed", "scf.yield", ("location: line 49 -> 44",)), ("changed", "tt.return", ("location: line 52 -> 34",))]
    ll = _diff(a["llir"], b["llir"], "llir")
    geps = [c for c in ll.changes if c.op == "getelementptr" and c.kind == "changed"]
    assert len(geps) == 88 and all("getelementptr [2 x i8]" in c.details[0] for c in geps)


def test_versions_with_renamed_dialect_pair_their_layouts():
    """3.2 prints #triton_gpu.*, 3.6 #ttg.*: the layouts pair by content, so the
    convert_layout renames are reported as op renames, not as layout changes."""
    d = _diff(_text("3.2.0", "softmax_sm80", "ttgir"), _text("3.6.0", "softmax_sm80", "ttgir"), "ttgir")
    assert not [c for c in d.changes if c.details and c.details[0].startswith("layout")]
    assert d.matched > 10


@pytest.mark.parametrize("ext", ["ttir", "ttgir", "llir", "ptx"])
def test_counts_without_changes_are_the_diffs_counts(ext):
    """diff_counts (what ``irscope passes`` reads) counts exactly what diff_modules
    reports, on pairs with every kind of change: across versions and targets
    (layouts edited, ops renamed), and across kernels (functions on one side only)."""
    from irscope.irdiff.engine import diff_counts
    from irscope.irdiff.model import KINDS

    sides = [("3.2.0", "softmax_sm80"), ("3.6.0", "softmax_sm80"), ("3.6.0", "softmax_sm90"),
             ("3.9.0", "softmax_sm90"), ("3.6.0", "helper_sm90"), ("3.6.0", "attn_sm90")]
    mods = {s: parse_stage(ext, _text(*s, ext)) for s in sides}
    seen = set()
    for a, b in zip(sides, sides[1:]):
        d = diff_modules(mods[a], mods[b], ext)
        got = diff_counts(mods[a], mods[b], ext)
        assert got == {k: d.count(k) for k in KINDS}, (a, b)
        seen.update(k for k in KINDS if got[k])
    assert seen == set(KINDS)  # the pairs exercise every kind
