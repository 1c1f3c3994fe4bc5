"""``irscope export --costs``: the TTGIR op graph with each convert_layout's cost and
each global access's width, drawn by the real ``dot``, against ``irscope explain
--json`` on the same capture (the views read the core's facts, they never compute)."""

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import irscope

DATA = Path(__file__).parent / "data"
CONVERSIONS = DATA / "why_conversions.irscope"
GATHER = DATA / "why_sm90_sm80.irscope"
SVG = "{http://www.w3.org/2000/svg}"
# Triton's three ways of moving the data, one capture each (why_conversions.irscope):
# #1 row sums through shared memory, #3 its N=8 variant by warp shuffles, #6 a chained
# dot with one conversion in registers and one through shared memory.
CASES = [(CONVERSIONS, "#1"), (CONVERSIONS, "#3"), (CONVERSIONS, "#6"), (GATHER, "#1"), (GATHER, "#3")]
FILLS = {"registers": "#c8efc0", "warp_shuffle": "#ffe699", "shared_memory": "#ffb3a7",
         "access": "#bcd7ff", "narrow-access": "#ffcf8a"}
NAMES = {"registers": "convert in registers", "warp_shuffle": "convert by warp shuffles",
         "shared_memory": "convert via shared memory", "access": "global access, full width",
         "narrow-access": "narrow global access"}
VIA_WORDS = {"registers": "via registers", "warp_shuffle": "via warp shuffles", "shared_memory": "via shared memory"}

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


def _explain(bundle: Path, kernel: str) -> dict:
    return json.loads(irscope("explain", bundle, kernel, "--json", check=True).stdout)


def _accesses(ex: dict) -> dict[int, list[dict]]:
    """TTGIR line -> the global accesses ``explain`` ties to that op."""
    out: dict[int, list[dict]] = {}
    for line in ex["lines"]:
        for a in line["global_accesses"]:
            if a["ttgir_line"] is not None:
                out.setdefault(a["ttgir_line"], []).append(a)
    return out


def _width(a: dict) -> str:
    """The width ``explain --json`` gives, as the node must spell it."""
    elem = a["bits"] // a["elements"]
    text = f"{elem}b x{a['elements']} of {a['max_elements'] * elem}b"
    return text + (" (narrow)" if a["elements"] < a["max_elements"] else "")


def _svg_nodes(svg: Path) -> dict[int, tuple[list[str], set[str], str]]:
    """TTGIR line -> (label texts, fills, border colour) of each op node of the SVG."""
    root = ET.parse(svg).getroot()
    out = {}
    for g in root.iter(f"{SVG}g"):
        if g.get("class") != "node":
            continue
        texts = [t.text or "" for t in g.iter(f"{SVG}text")]
        where = [m for t in texts if (m := re.search(r"\bL(\d+)$", t))]
        if not where:
            continue  # a block argument
        shapes = [p for p in g.iter() if p.tag in (f"{SVG}polygon", f"{SVG}path")]
        out[int(where[-1].group(1))] = (texts, {p.get("fill", "") for p in shapes},
                                        shapes[0].get("stroke", "") if shapes else "")
    return out


def _graph_texts(svg: Path) -> list[str]:
    """The texts outside every node and cluster: the title, the notes and the legend."""
    root = ET.parse(svg).getroot()
    top = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "graph")
    return [t.text or "" for t in top.findall(f"{SVG}text")]


@needs_dot
@pytest.mark.parametrize("bundle,kernel", CASES, ids=[f"{b.stem}{k}" for b, k in CASES])
def test_nodes_agree_with_explain(tmp_path, bundle, kernel):
    out = tmp_path / "costs.svg"
    p = irscope("export", bundle, kernel, "--costs", "-o", out, check=True)
    assert "costs: " in p.stderr
    ex = _explain(bundle, kernel)
    nodes = _svg_nodes(out)
    used = set()
    for c in ex["conversions"]:
        texts, fills, border = nodes[c["ttgir_line"]]
        assert texts[0] == "ttg.convert_layout"
        assert VIA_WORDS[c["via"]] in texts and FILLS[c["via"]] in fills
        used.add(c["via"])
        if c["via"] == "shared_memory":
            n = c["bank_conflicts"]
            ways = "1-way (no bank conflicts)" if n == 1 else f"{n}-way bank conflicts"
            assert f"{c['scratch_bytes']:,} B scratch \u00b7 {ways}" in texts
            assert c["scratch_bytes"] > 0
        else:
            assert not any("scratch" in t for t in texts)
    for line, accs in _accesses(ex).items():
        texts, fills, border = nodes[line]
        narrow = any(a["elements"] < a["max_elements"] for a in accs)
        kind = "narrow-access" if narrow else "access"
        assert FILLS[kind] in fills
        used.add(kind)
        for a in accs:
            assert any(t.startswith(_width(a)) for t in texts), (texts, a)
        assert (border == "#c62828") == narrow
    # Every other op is grey; block arguments stay white.
    costed = {c["ttgir_line"] for c in ex["conversions"]} | set(_accesses(ex))
    for line, (texts, fills, _) in nodes.items():
        if line not in costed:
            assert fills == {"#f0f0f0"}, (line, texts)
    legend = _graph_texts(out)
    assert any(t.strip() == "legend:" for t in legend)
    for kind in used:
        assert any(t.strip() == NAMES[kind] for t in legend), (kind, legend)
    for kind in set(NAMES) - used:
        assert not any(t.strip() == NAMES[kind] for t in legend)
    assert used >= {c["via"] for c in ex["conversions"]}


def test_all_three_ways_and_a_narrow_gather_are_covered():
    vias = {c["via"] for k in ("#1", "#3", "#6") for c in _explain(CONVERSIONS, k)["conversions"]}
    assert vias == {"registers", "warp_shuffle", "shared_memory"}
    gather = _accesses(_explain(GATHER, "#1"))
    assert any(a["elements"] < a["max_elements"] for accs in gather.values() for a in accs)


@needs_dot
def test_narrow_gather_is_marked_in_the_picture(tmp_path):
    out = tmp_path / "gather.svg"
    irscope("export", GATHER, "gather_kernel", "--target", "sm_80", "--costs", "-o", out, check=True)
    texts = [t for texts, _, _ in _svg_nodes(out).values() for t in texts]
    assert "16b x1 of 128b (narrow)" in texts
    assert any(t.strip() == "red border: narrow, or bank conflicts" for t in _graph_texts(out))


@pytest.mark.parametrize("bundle,kernel", [(CONVERSIONS, "#6"), (GATHER, "#1")])
def test_json_carries_the_core_fields(bundle, kernel):
    data = json.loads(irscope("export", bundle, kernel, "--costs", "--format", "json", check=True).stdout)
    ex = _explain(bundle, kernel)
    by_line = {n["line"]: n for n in data["nodes"] if n["kind"] == "op"}
    for c in ex["conversions"]:
        node = by_line[c["ttgir_line"]]
        assert node["conversion"] == c and node["cost"] == c["via"] and node["fill"] == FILLS[c["via"]]
    for line, accs in _accesses(ex).items():
        node = by_line[line]
        assert node["global_accesses"] == accs
        assert node["cost"] == ("narrow-access" if any(a["elements"] < a["max_elements"] for a in accs)
                                else "access")
    costed = {c["ttgir_line"] for c in ex["conversions"]} | set(_accesses(ex))
    assert {ln for ln, n in by_line.items() if n["cost"] is not None} == costed
    legend = dict(map(tuple, data["graph"]["legend"]))
    assert {legend[NAMES[n["cost"]]] for n in by_line.values() if n["cost"]} <= set(FILLS.values())


def test_costed_ops_never_fold():
    data = json.loads(irscope("export", CONVERSIONS, "#6", "--costs", "--max-nodes", "8", "--format", "json",
                              check=True).stdout)
    assert any(n["kind"] == "group" for n in data["nodes"])
    drawn = {n["line"] for n in data["nodes"] if n["kind"] == "op" and n["cost"]}
    ex = _explain(CONVERSIONS, "#6")
    assert drawn == {c["ttgir_line"] for c in ex["conversions"]} | set(_accesses(ex))
    assert all(n["fill"] == "#f0f0f0" for n in data["nodes"] if n["kind"] == "group")


@pytest.mark.parametrize("extra,words", [
    (("--stage", "ptx"), "--costs draws the final TTGIR"),
    (("--pipeline",), "--costs draws the TTGIR op graph, not --pipeline"),
    (("--lineage", "45"), "--costs draws the TTGIR op graph, not --lineage"),
    (("--pass", "5"), "--costs and --pass do not combine"),
    (("--diff", f"{CONVERSIONS}:#5"), "--costs and --diff do not combine"),
])
def test_bad_combinations_are_one_line(extra, words):
    p = irscope("export", CONVERSIONS, "#6", "--costs", *extra, "--format", "dot")
    assert p.returncode == 1, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("irscope: error: ") and words in lines[0], p.stderr
    assert p.stdout == ""
