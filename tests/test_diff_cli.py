"""``irscope diff`` on the captured fixture bundle and on plain IR files."""

import json
import shutil
from pathlib import Path

import pytest

from conftest import DATA, irscope

B = DATA / "samples_sm90.irscope"
IR = DATA / "ir"


def _json(*args):
    return json.loads(irscope("diff", *args, "--json", check=True).stdout)


def test_two_autotune_configs():
    d = _json(f"{B}:matmul_kernel#0", f"{B}:matmul_kernel#1")
    assert set(d) >= {"stages", "metadata", "resources", "instruction_mix", "passes", "lines"}
    assert set(d["stages"]) == {"ttir", "ttgir", "llir", "ptx", "sass"}
    for s in d["stages"].values():
        assert set(s) >= {"matched", "added", "removed", "moved", "changed", "changes"}
        assert s["added"] + s["removed"] + s["moved"] + s["changed"] == len(s["changes"])
        assert all(set(c) >= {"kind", "op", "before", "after", "details", "python_line"} for c in s["changes"])
    meta = {m["name"]: (m["before"], m["after"]) for m in d["metadata"] if m["changed"]}
    # checked by hand: config 0 is 128x256x64 with 8 warps, config 1 128x128x32 with 4 warps, 4 stages
    assert meta["num_warps"] == (8, 4) and meta["num_stages"] == (3, 4)
    assert meta["constexprs.BLOCK_SIZE_N"] == (256, 128) and meta["constexprs.BLOCK_SIZE_K"] == (64, 32)
    res = {m["name"]: (m["before"], m["after"]) for m in d["resources"] if m["changed"]}
    assert res["shared"] == (147456, 65536) and res["occupancy.blocks_per_sm"] == (1, 2)
    layout = [c for c in d["stages"]["ttgir"]["changes"] if c["op"] == "#blocked"]
    assert layout and "layout: warpsPerCTA [8, 1] -> [4, 1]" in layout[0]["details"]
    dot = [ln for ln in d["lines"] if "tl.dot" in (ln["text"] or "")]
    assert dot and dot[0]["counts"]["llir"]["before"] > dot[0]["counts"]["llir"]["after"]


def test_a_capture_against_itself_and_a_copy():
    d = _json(f"{B}:add_kernel", f"{B}:add_kernel")
    assert all(s["changes"] == [] for s in d["stages"].values())
    assert not [m for m in d["metadata"] + d["resources"] if m["changed"]]
    p = irscope("diff", f"{B}:add_kernel", f"{B}:add_kernel", check=True)
    assert "The IR is the same up to renaming." in p.stdout


def test_line_and_stage_filters():
    whole = _json(f"{B}:matmul_kernel#0", f"{B}:matmul_kernel#1")
    line = next(ln["line"] for ln in whole["lines"] if "tl.dot" in (ln["text"] or ""))
    d = _json(f"{B}:matmul_kernel#0", f"{B}:matmul_kernel#1", "--line", line, "--stage", "ttgir", "--stage", "ptx")
    assert set(d["stages"]) == {"ttgir", "ptx"}
    assert d["stages"]["ttgir"]["changes"] and all(c["python_line"] == line for s in d["stages"].values()
                                                   for c in s["changes"])


def test_files_of_one_format(tmp_path):
    a, b = IR / "3.6.0" / "attn_sm90" / "attn_kernel.ttgir", IR / "3.9.0" / "attn_sm90" / "attn_kernel.ttgir"
    d = _json(a, b)
    assert list(d["stages"]) == ["ttgir"] and d["stages"]["ttgir"]["matched"] > 80
    other = tmp_path / "attn.txt"
    shutil.copy(b, other)
    assert _json(a, other, "--format", "ttgir")["stages"]["ttgir"] == d["stages"]["ttgir"]
    bad = irscope("diff", a, IR / "3.6.0" / "attn_sm90" / "attn_kernel.ptx")
    assert bad.returncode == 1 and "one format" in bad.stderr and "Traceback" not in bad.stderr


def test_two_bundles_and_passes():
    d = _json(B, B)
    assert len(d["pairs"]) == 6 and d["only_a"] == d["only_b"] == []
    steps = _json(f"{B}:add_kernel", "--passes")
    assert steps and all(set(s) >= {"pass", "name", "stage", "next", "diff"} for s in steps)
    convert = next(s for s in steps if s["name"] == "ConvertTritonToTritonGPU")
    assert convert["diff"]["changed"] > 5  # every tensor type gains its #blocked layout
    one = _json(f"{B}:add_kernel", f"{B}:add_kernel", "--pass", convert["pass"])
    assert one["stages"]["mlir"]["changes"] == []


@pytest.mark.parametrize("args,message", [
    (["nope.irscope", "x.ttgir"], "no such file"),
    ([str(B)], "two sides"),
    ([f"{B}:no_such_kernel", str(B)], "no kernel 'no_such_kernel'"),
    ([f"{B}:matmul_kernel#9", f"{B}:matmul_kernel"], "out of range"),
    ([str(B), str(IR / "3.6.0" / "add_sm90" / "add_kernel.ttgir")], "compare a file with a file"),
])
def test_bad_sides_are_one_line(args, message):
    p = irscope("diff", *args)
    assert p.returncode == 1 and message in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_a_side_without_a_figure_shows_a_dash_not_none():
    """A failed capture paired with a good one has no registers: '12 -> -'."""
    from types import SimpleNamespace

    from irscope.cli.diff_cmd import _delta

    assert _delta(SimpleNamespace(before=12, after=None, changed=True)).plain == "12 -> -"
    assert _delta(SimpleNamespace(before=None, after=None, changed=False)).plain == "-"
    assert _delta(None).plain == "-"


def test_matrix_of_ir_files_is_one_error_line():
    # Three sides make a matrix of captures; a plain IR file among them is a one-line error.
    f = IR / "3.6.0" / "add_sm80" / "add_kernel.ttgir"
    r = irscope("diff", f, f, f)
    assert r.returncode == 1 and "is an IR file, not a capture" in r.stderr and "Traceback" not in r.stderr
