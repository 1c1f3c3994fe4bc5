"""``irscope export`` end to end: formats from the file name, stdout, atomic writes,
and one-line errors for every bad input."""

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import irscope

SAMPLES = Path(__file__).parent / "data" / "samples_sm90.irscope"


def _error(p) -> str:
    """The one-line error of a failed run (and nothing like a traceback)."""
    assert p.returncode == 1, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("irscope: error: "), p.stderr
    return lines[0]


def test_svg_from_the_extension_and_notes_on_stderr(tmp_path):
    out = tmp_path / "mm.svg"
    p = irscope("export", SAMPLES, "matmul_kernel", "--stage", "ttgir", "-o", out, check=True)
    root = ET.parse(out).getroot()
    assert root.tag.endswith("svg") and "ttng.warp_group_dot" in ET.tostring(root, encoding="unicode")
    assert f"wrote {out}" in p.stderr and p.stdout == ""
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_dot_and_json_go_to_stdout():
    p = irscope("export", SAMPLES, "add_kernel", check=True)
    assert p.stdout.startswith("digraph irscope {")
    p = irscope("export", SAMPLES, "add_kernel", "--format", "json", "--stage", "ttir", check=True)
    data = json.loads(p.stdout)
    assert data["graph"]["kind"] == "stage" and any(n["name"] == "tt.load" for n in data["nodes"])


def test_big_snapshot_says_it_folded(tmp_path):
    out = tmp_path / "lowered.json"
    p = irscope("export", SAMPLES, "matmul_kernel", "--pass", "65", "-o", out, check=True)
    assert "more than 1,000, so drawn with --max-nodes 300" in p.stderr
    data = json.loads(out.read_text())
    assert data["graph"]["nodes_drawn"] <= 300 and any(n.get("status") == "added" for n in data["nodes"])


def test_pipeline_and_lineage(tmp_path):
    out = tmp_path / "pipe.png"
    irscope("export", SAMPLES, "matmul_kernel", "--pipeline", "--diff", f"{SAMPLES}:matmul_kernel#3", "-o", out,
            check=True)
    assert out.read_bytes()[:4] == b"\x89PNG"
    p = irscope("export", SAMPLES, "matmul_kernel", "--lineage", "70", "--format", "dot", check=True)
    assert "lineage of Python line 70" in p.stdout and "by location only" in p.stderr


def test_focus_and_diff(tmp_path):
    out = tmp_path / "focus.dot"
    p = irscope("export", SAMPLES, "matmul_kernel", "--op", "ttng.warp_group_dot", "--radius", "1", "--diff",
                f"{SAMPLES}:matmul_kernel#1", "-o", out, check=True)
    assert "ttng.warp_group_dot" in out.read_text() and "diff engine" in p.stderr


@pytest.mark.parametrize("args, message", [
    (["nokernel"], "no kernel 'nokernel'"),
    (["add_kernel", "--stage", "nope"], "has no stage 'nope'"),
    (["add_kernel", "--stage", "cubin"], "not an IR irscope parses"),
    (["add_kernel", "--lines", "9-x"], "--lines '9-x'"),
    (["add_kernel", "--lines", "1-2"], "no op comes from Python lines 1-2"),
    (["add_kernel", "--op", "tt.dott"], "no op named 'tt.dott'"),
    (["add_kernel", "--format", "png"], "png is binary"),
    (["add_kernel", "-o", "x.pdf"], "cannot tell the format"),
    (["add_kernel", "--pipeline", "--lines", "3"], "--lines focus stage graphs"),
    (["add_kernel", "--pass", "999"], "no 999"),
    (["add_kernel", "--lineage", "1"], "no op of any stage comes from Python line 1"),
])
def test_one_line_errors(args, message, tmp_path):
    line = _error(irscope("export", SAMPLES, *args, cwd=tmp_path))
    assert message in line


def test_missing_dot_is_one_line_naming_the_fix(tmp_path):
    env = dict(os.environ, PATH=str(tmp_path))  # no dot on it (python runs by its full path)
    line = _error(irscope("export", SAMPLES, "add_kernel", "-o", tmp_path / "a.svg", env=env))
    assert "apt-get install graphviz" in line and "scripts/setup.sh" in line
    assert not (tmp_path / "a.svg").exists()


def test_a_failed_export_leaves_the_old_file(tmp_path):
    out = tmp_path / "keep.svg"
    out.write_text("old")
    _error(irscope("export", SAMPLES, "add_kernel", "--op", "nothing", "-o", out))
    assert out.read_text() == "old"


def test_lineage_is_op_exact_where_exact_links_were_captured(tmp_path):
    # vector_add_exact.irscope: a real `irscope run sample_kernels/vector_add.py
    # --exact-links` (Triton 3.6, sm_90). Line 22 is the first tl.load.
    data = Path(__file__).parent / "data"
    notes = {}
    for name in ("vector_add_exact", "samples_sm90"):
        out = tmp_path / f"{name}.json"
        irscope("export", data / f"{name}.irscope", "add_kernel", "--lineage", "22", "-o", out, check=True)
        g = json.loads(out.read_text())
        notes[name] = g["graph"]["notes"]
        kinds = {e["link"] for e in g["edges"] if e["kind"] == "link"}
        if name == "vector_add_exact":
            assert "exact" in kinds and not kinds & {"same-location", "same-line"}
        else:
            assert "exact" not in kinds and "same-location" in kinds
    assert any(n.startswith("ttgir -> llir:") and "op-exact (--exact-links)" in n for n in notes["vector_add_exact"])
    assert any(n.startswith("ttgir -> llir:") and "by location only" in n for n in notes["samples_sm90"])
