"""The graphs ``irscope export`` draws, checked against the IR model they come from
(the checked-in samples bundle: real Triton 3.6 sm_90 captures)."""

import json
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import networkx as nx
import pytest

import irscope
from irscope.errors import IrscopeError
from irscope.export import (
    DEFAULT_MAX_NODES,
    lineage_graph,
    module_graph,
    pipeline_graph,
    stage_graph,
)
from irscope.export.render import render, to_dot
from irscope.export.style import GREY_FILL

SAMPLES = Path(__file__).parent / "data" / "samples_sm90.irscope"
LOWERED = 66  # matmul_kernel #2: the snapshot after convert-triton-gpu-to-llvm, 17,908 LLVM-dialect ops


@pytest.fixture(scope="module")
def bundle():
    with irscope.open(SAMPLES) as b:
        yield b


@pytest.fixture(scope="module")
def matmul(bundle):
    return bundle.capture("matmul_kernel")


def _ops(g):
    return [a for _, a in g.graph.nodes(data=True) if a["kind"] == "op"]


def test_every_op_is_a_node_and_every_def_use_an_edge(bundle):
    cap = bundle.capture("add_kernel")
    module = cap.stage("ttgir").module
    g = stage_graph(cap, "ttgir")
    assert sorted(a["line"] for a in _ops(g)) == sorted(op.line for fn in module.functions for op in fn.ops())
    # The core's own graph of the module is the oracle for def-use.
    oracle = module.to_networkx()
    want = {(a, b) for a, b in oracle.edges if a.startswith("op") and b.startswith("op")}
    got = {(a, b) for a, b, k in g.graph.edges(data="kind") if k == "def-use" and a.startswith("op")}
    assert got == want
    by_line = {a["line"]: a for a in _ops(g)}
    load = next(op for op in module.ops() if op.name == "tt.load")
    node = by_line[load.line]
    assert node["label"][0] == "tt.load" and node["python_line"] == load.location.user_frame().line
    assert f"py {node['python_line']}" in node["label"][-1] and "1024" in node["label"][1]
    assert node["fill"] != by_line[next(op.line for op in module.ops() if op.dialect == "arith")]["fill"]
    args = [a for _, a in g.graph.nodes(data=True) if a["kind"] == "block_arg"]
    assert {a["name"] for a in args} >= {"%x_ptr", "%y_ptr", "%output_ptr", "%n_elements"}
    assert g.notes == [] and g.ops_total == len(by_line)


def test_regions_are_nested_clusters_with_block_args_and_yields(matmul):
    g = stage_graph(matmul, "ttgir")
    clusters = g.graph.graph["clusters"]
    loop = next(a for _, a in g.graph.nodes(data=True) if a.get("name") == "scf.for")
    cid = loop["cluster"]
    assert clusters[cid]["kind"] == "region" and clusters[clusters[cid]["parent"]]["kind"] == "function"
    body = [a for _, a in g.graph.nodes(data=True) if a.get("cluster") == cid]
    assert any(a["name"] == "ttng.warp_group_dot" for a in body)
    assert any(a["kind"] == "block_arg" for a in body)  # the loop's iteration arguments
    yields = [(u, v) for u, v, k in g.graph.edges(data="kind") if k == "yield"]
    assert yields == [(n, f"op{loop['line']}") for n, a in g.graph.nodes(data=True) if a.get("name") == "scf.yield"]
    # In DOT the loop's cluster sits inside the function's.
    dot = to_dot(g)
    assert dot.index("tt.func @matmul_kernel") < dot.index("scf.for (IR line")


def test_focus_on_lines_and_on_an_op(matmul):
    g = stage_graph(matmul, "ttgir", lines=(65, 66))
    assert {a["python_line"] for _, a in g.graph.nodes(data=True)} <= {65, 66}
    assert len(_ops(g)) == sum(1 for op in matmul.stage("ttgir").module.ops()
                               if op.location.user_frame() and op.location.user_frame().line in (65, 66))
    g0 = stage_graph(matmul, "ttgir", op="ttng.warp_group_dot", radius=0)
    assert [a["name"] for _, a in g0.graph.nodes(data=True)] == ["ttng.warp_group_dot"]
    g2 = stage_graph(matmul, "ttgir", op="ttng.warp_group_dot", radius=2)
    seed = next(n for n, a in g2.graph.nodes(data=True) if a.get("name") == "ttng.warp_group_dot")
    full = stage_graph(matmul, "ttgir").graph
    dist = nx.single_source_shortest_path_length(
        nx.Graph([(u, v) for u, v, k in full.edges(data="kind") if k == "def-use"]), seed, cutoff=2)
    assert set(g2.graph.nodes) == set(dist)
    with pytest.raises(IrscopeError, match="no op named 'tt.dott'"):
        stage_graph(matmul, "ttgir", op="tt.dott")
    with pytest.raises(IrscopeError, match="no op comes from Python lines 1-2"):
        stage_graph(matmul, "ttgir", lines=(1, 2))
    with pytest.raises(IrscopeError, match="has no stage 'nope'"):
        stage_graph(matmul, "nope")


def test_big_llvm_snapshot_folds_to_the_default_budget(matmul):
    # A local, not a fixture: pytest prints a failing test's arguments, and the repr
    # of a 17,908-op Module (each op's repr holds its parent) would fill the memory.
    lowered = matmul.pass_at(LOWERED).module  # parsed once per capture
    ops = sum(1 for fn in lowered.functions for _ in fn.ops())
    assert ops > 5000
    g = module_graph(lowered, title="lowered", file=matmul.row.file)
    assert any(f"--max-nodes {DEFAULT_MAX_NODES}" in n for n in g.notes)
    assert g.nodes <= DEFAULT_MAX_NODES
    nodes = [a for _, a in g.graph.nodes(data=True)]
    groups = [a for a in nodes if a["kind"] == "group"]
    assert groups and any(n.startswith("collapsed ") for n in g.notes)
    # Every op is accounted for: drawn, or counted in exactly one summary node.
    assert sum(a["ops"] for a in groups) + sum(1 for a in nodes if a["kind"] == "op") == ops
    # Grouped by Python line within a region: one line per group where the op has one.
    assert all(len(a["python_lines"]) <= 1 for a in groups if a["cluster"] != "removed")
    big = max(groups, key=lambda a: a["count"])
    assert big["count"] > 1000 and "ops folded" in big["label"][0]
    assert sum(a["names"].get("llvm.extractvalue", 0) for a in groups) > 1000
    assert all(c >= 1 for _, _, c in g.graph.edges(data="count"))
    small = module_graph(lowered, title="lowered", file=matmul.row.file, max_nodes=40)
    assert small.nodes <= 40
    # Through the capture, a summary node of one Python line quotes the line.
    quoted = stage_graph(matmul, None, pass_index=LOWERED, max_nodes=60)
    one_line = [a for _, a in quoted.graph.nodes(data=True) if a["kind"] == "group" and len(a.get("python_lines", ())) == 1]
    assert one_line and all(matmul.source.line(a["python_lines"][0]).strip()[:50] in a["label"][1]
                            for a in one_line)


def test_pass_snapshot_highlights_what_the_pass_added(matmul):
    g = stage_graph(matmul, None, pass_index=LOWERED - 1, max_nodes=120)
    assert "ConvertTritonGPUToLLVM" in g.title and "IR after it" in g.title
    nodes = [a for _, a in g.graph.nodes(data=True)]
    assert any(a.get("status") == "added" for a in nodes)
    removed = [a for a in nodes if a["kind"] == "removed" or a.get("cluster") == "removed"]
    assert removed and all(a["status"] == "removed" for a in removed)  # the TTGIR ops the pass erased
    quiet = next(p for p in matmul.passes() if not p.changed and p.index + 1 < len(matmul.passes())
                 and matmul.passes()[p.index + 1].stage == p.stage)
    g2 = stage_graph(matmul, None, pass_index=quiet.index)
    assert not any(a.get("status") for _, a in g2.graph.nodes(data=True))
    assert any("did not change the IR" in n for n in g2.notes)
    with pytest.raises(IrscopeError, match="pass snapshots"):
        stage_graph(matmul, None, pass_index=999)


def test_diff_colours_against_another_capture(bundle, matmul):
    same = stage_graph(matmul, "ttgir", diff_against=matmul)
    assert not any(a.get("status") for _, a in same.graph.nodes(data=True))
    assert all(a["fill"] == GREY_FILL for a in _ops(same))
    other = bundle.capture("matmul_kernel", variant=1)
    g = stage_graph(matmul, "ttgir", diff_against=other)
    status = Counter(a.get("status") for _, a in g.graph.nodes(data=True))
    assert status["changed"] > 0 and status["removed"] > 0
    assert any("diff engine" in n for n in g.notes)


def test_pipeline_graph(bundle, matmul):
    g = pipeline_graph(matmul)
    passes = matmul.passes()
    nodes = {n: a for n, a in g.graph.nodes(data=True) if a["kind"] == "pass"}
    assert [a["index"] for a in nodes.values()] == [p.index for p in passes]
    clusters = g.graph.graph["clusters"]
    for p in passes:
        a = nodes[f"pass{p.index}"]
        # A nested pass sits in a cluster under its parent, inside the stage's cluster.
        c = a["cluster"] if p.step.parent is None else clusters[a["cluster"]]["parent"]
        assert c == f"stage:{p.stage}" and a["added"] == p.step.counts.added
        assert (a["fill"] == GREY_FILL) == (not p.changed)
    order = [n for col in g.graph.graph["columns"] for n in col if n in nodes]
    assert order == [f"pass{p.index}" for p in passes]  # columns read left to right, in pass order
    for col in g.graph.graph["columns"]:  # each column one chain, top to bottom
        assert all(g.graph.has_edge(a, b) for a, b in zip(col, col[1:]))
    assert "ptx" in {a.get("name") for a in g.graph.nodes.values()}
    other = bundle.capture("matmul_kernel", variant=3)
    gd = pipeline_graph(matmul, other)
    marks = Counter(a.get("status") for a in gd.graph.nodes.values())
    assert marks["only-here"] + marks["only-other"] >= 1


def test_lineage_graph(matmul):
    g = lineage_graph(matmul, 70)
    nodes = dict(g.graph.nodes(data=True))
    assert "accumulator.to(tl.float16)" in nodes["python"]["label"][1]
    stages = {a.get("stage") for a in nodes.values()} - {None}
    assert stages == {"ttir", "ttgir", "llir", "ptx", "sass"}
    kinds = {a["link"] for _, _, a in g.graph.edges(data=True) if a["kind"] == "link"}
    assert "same-location" in kinds and "same-line" in kinds
    assert any("by location only" in n and "--exact-links" in n for n in g.notes)
    styles = {a["link"]: a.get("style") for _, _, a in g.graph.edges(data=True) if a["kind"] == "link"}
    assert styles["same-location"] == "dashed" and styles["same-line"] == "dotted"
    with pytest.raises(IrscopeError, match="no op of any stage comes from Python line 5"):
        lineage_graph(matmul, 5)


def test_render_formats(bundle):
    g = stage_graph(bundle.capture("add_kernel"), "ttgir")
    dot = render(g, "dot").decode()
    assert subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, check=False).returncode == 0
    root = ET.fromstring(render(g, "svg"))
    assert len([e for e in root.iter() if e.get("class") == "node"]) == g.nodes
    data = json.loads(render(g, "json"))
    assert len(data["nodes"]) == g.nodes and len(data["edges"]) == g.edges
    assert {"source", "target", "kind"} <= set(data["edges"][0]) and data["graph"]["kind"] == "stage"
    assert render(g, "png")[:4] == b"\x89PNG"


def test_missing_dot_names_the_fix(bundle, monkeypatch, tmp_path):
    g = stage_graph(bundle.capture("add_kernel"), "ttgir")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(IrscopeError, match="apt-get install graphviz"):
        render(g, "svg")
    assert render(g, "dot")  # DOT and JSON need no dot binary


def test_diff_against_an_ir_file(matmul):
    ir = Path(__file__).parent / "data" / "ir" / "3.6.0" / "matmul_sm90"
    g = stage_graph(matmul, "ttgir", diff_against=irscope.read_ir_file(str(ir / "matmul_kernel.ttgir")))
    assert any(str(ir / "matmul_kernel.ttgir") in n for n in g.notes)
    assert any(a.get("status") for _, a in g.graph.nodes(data=True))
    with pytest.raises(IrscopeError, match="is ptx, and the ttgir stage cannot be compared"):
        stage_graph(matmul, "ttgir", diff_against=irscope.read_ir_file(str(ir / "matmul_kernel.ptx")))


def _constants(n: int) -> str:
    body = "\n".join(f"    %c{i} = arith.constant {i} : i32" for i in range(n - 1))
    return f"module {{\n  tt.func @k() {{\n{body}\n    tt.return\n  }}\n}}\n"


def test_every_op_up_to_1000_then_300_by_default():
    from irscope.core.files import parse_text

    at = module_graph(parse_text(_constants(1000), "ttgir").module, title="k")
    assert at.nodes == 1000 and at.notes == []
    past = module_graph(parse_text(_constants(1001), "ttgir").module, title="k")
    assert past.nodes <= DEFAULT_MAX_NODES and "1,001 ops: more than 1,000" in past.notes[0]
    every = module_graph(parse_text(_constants(1001), "ttgir").module, title="k", max_nodes=0)
    assert every.nodes == 1001


def test_fold_plan_keeps_the_budget_and_the_skeleton():
    from irscope.export.collapse import Member, plan

    members = [Member(f"m{i}", ("fn", "loop" if i % 3 else "fn"), i % 7) for i in range(500)]
    p = plan(members, 50, keep={"m0", "m3"})
    assert p.drawn <= 50 and "m0" not in p.group_of and "m3" not in p.group_of
    drawn = len(members) - len(p.group_of) + len(p.groups)
    assert drawn == p.drawn
    assert all(len({(m.clusters[-1], m.python_line) for m in members if p.group_of.get(m.key) == n}) == 1
               for n in range(len(p.groups)))  # grouped by (region, Python line)
    coarse = plan(members, 3)
    assert coarse.level in ("region", "function") and coarse.drawn <= 3
    assert plan(members[:10], 50).group_of == {}


def test_pipeline_marks_passes_only_the_other_capture_ran(bundle):
    short, long_ = bundle.capture("matmul_kernel", variant=1), bundle.capture("matmul_kernel", variant=0)
    assert len(short.passes()) < len(long_.passes())
    g = pipeline_graph(short, long_)
    ghosts = [a for a in g.graph.nodes.values() if a.get("status") == "only-other"]
    assert ghosts
    clusters = g.graph.graph["clusters"]
    for a in ghosts:
        assert clusters[a["cluster"]]["kind"] == "removed"
        assert clusters[a["cluster"]]["parent"] == f"stage:{long_.passes()[a['index']].stage}"
