"""Hostile text through every exporter of ``irscope export``: quotes, ``<script>``,
braces, backslashes, Rich markup and non-UTF-8 bytes, in op names, string
attributes, location file names, pass names and the kernel's source. The DOT must
parse (the real ``dot`` runs), the SVG must be well-formed XML with no element
the IR smuggled in, the JSON must load, and the hostile text must come out as text."""

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import irscope
from irscope.core.files import parse_text
from irscope.export import lineage_graph, module_graph, pipeline_graph, stage_graph
from irscope.export.render import render
from irscope.store.bundle import Bundle
from irscope.compiler.records import CapturedKernel, PassRecord, Resources, RunInfo

SAMPLES = Path(__file__).parent / "data" / "samples_sm90.irscope"
EVIL = "<script>alert('x')</script>{[bold]}&amp;\"q\"\\N\\l"
EVIL_FILE = "<script>f{[bold]}&amp;'vector_add.py"  # survives every stage's file syntax
EVIL_IR = EVIL.replace("\\", "\\\\").replace('"', '\\"')  # as an MLIR string attribute prints it
SVG_NS = "{http://www.w3.org/2000/svg}"

# Non-UTF-8 bytes as Python reads them with surrogateescape (lone surrogates).
RAW = b'\xff\xfe\x80'.decode("utf-8", "surrogateescape")
HOSTILE_MLIR = f'''#loc = loc("/k/{EVIL_FILE}":3:0)
#loc1 = loc("/k/{EVIL_FILE}":4:5)
#loc2 = loc("/k/b{RAW}d.py":5:7)
module {{
  tt.func public @k(%arg0: i32 loc("x"(#loc))) attributes {{noinline = false}} {{
    %0 = arith.constant {{note = "{EVIL_IR}"}} 0 : i32 loc(#loc1)
    %1 = arith.addi %arg0, %0 : i32 loc(#loc2)
    %2 = "my.<script>{{[bold]}}"(%1) {{s = "]]>{RAW}"}} : (i32) -> i32 loc(#loc1)
    %3 = scf.for %i = %0 to %2 step %1 iter_args(%acc = %1) -> (i32) : i32 {{
      %4 = arith.addi %acc, %i : i32 loc(#loc1)
      scf.yield %4 : i32 loc(#loc1)
    }} loc(#loc1)
    tt.return loc(#loc)
  }} loc(#loc)
}} loc(#loc)
'''


def _check_svg(svg: bytes, *expected: str) -> str:
    """Well-formed XML, only SVG's own elements, and ``expected`` among its texts."""
    root = ET.fromstring(svg)
    tags = {el.tag.replace(SVG_NS, "") for el in root.iter()}
    assert tags <= {"svg", "g", "title", "text", "polygon", "path", "ellipse", "a", "polyline"}, tags
    texts = " ".join(t for el in root.iter() for t in [el.text or "", *(el.attrib.values())])
    for e in expected:
        assert e in texts, (e, texts[:2000])
    return texts


def _check_all(graph, *expected: str) -> None:
    dot = render(graph, "dot").decode("utf-8")
    p = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, check=False)
    assert p.returncode == 0, p.stderr
    _check_svg(render(graph, "svg"), *expected)
    data = json.loads(render(graph, "json"))
    assert data["nodes"]
    assert render(graph, "png").startswith(b"\x89PNG")


def test_hostile_module_graph():
    module = parse_text(HOSTILE_MLIR, "ttgir").module
    g = module_graph(module, title=f"title {EVIL}")
    # A line the parser does not understand is an <unknown> op whose text is kept.
    tips = {a.get("name"): a.get("tooltip") for _, a in g.graph.nodes(data=True)}
    assert '"my.<script>{[bold]}"(%1)' in tips["<unknown>"]
    # The op's text, with its string attribute, is the node's tooltip, read back
    # exactly: backslashes and quotes escaped for DOT (irscope.export.dot_text).
    _check_all(g, '"my.<script>{[bold]}"(%1)', f"title {EVIL}", EVIL_IR)
    texts = _check_svg(render(g, "svg"))
    assert "\ufffd" in texts  # the undecodable bytes, replaced, not dropped
    dot = render(g, "dot").decode("utf-8")
    # Outside quoted strings (tooltips) the hostile tags appear only as entities.
    unquoted = re.sub(r'"(?:[^"\\]|\\.)*"', '""', dot)
    assert "<script>" not in unquoted and "&lt;script&gt;" in unquoted
    for _, a in g.graph.nodes(data=True):
        assert not any(0xD800 <= ord(ch) <= 0xDFFF for ch in json.dumps(a, ensure_ascii=False))


@pytest.fixture(scope="module")
def hostile_bundle(tmp_path_factory):
    """The add_kernel capture again, with hostile file names, source, attribute and
    pass names, written through the store API."""
    with irscope.open(SAMPLES) as b:
        cap = b.capture("add_kernel")
        stages = {s: cap.stage(s).text for s in ("ttir", "ttgir", "llir", "ptx", "sass")}
        passes = [p for p in cap.passes() if p.stage in ("ttir", "ttgir")][:8]
        pass_texts = [p.text for p in passes]
        source, first = cap.source.text, cap.source.first_line
    fix = lambda t: t.replace("vector_add.py", EVIL_FILE)
    stages = {s: fix(t) for s, t in stages.items()}
    stages["ttgir"] = stages["ttgir"].replace("arith.constant 1024 : i32", f'arith.constant {{evil = "{EVIL_IR}"}} 1024 : i32', 1)
    source = source.replace("output = x + y", f"output = x + y # {EVIL}")
    records = [PassRecord(i, p.stage, p.kind, p.when, f"{p.name}{EVIL}", p.argument, "", "builtin.module", "",
                          fix(t), 0.001) for i, (p, t) in enumerate(zip(passes, pass_texts))]
    path = tmp_path_factory.mktemp("hostile") / "hostile.irscope"
    k = CapturedKernel(
        kernel="add_kernel", file=f"sample_kernels/{EVIL_FILE}", first_line=first, source=source, target="sm_90",
        variant=f"V={EVIL}", hash="h", signature={}, constexprs={}, attrs={}, options={"num_warps": 4},
        versions={"triton": "3.6.0"}, host="h", argv=["k.py"], started="now", compile_seconds=0.1,
        stage_seconds={}, stages=stages, passes=records,
        resources=Resources(registers=26, spill_stores=0, spill_loads=0, shared=0, source="test"), metadata={},
        mode="compile-only")
    with Bundle.open(str(path), create=True) as out:
        run = out.begin_run(RunInfo(["irscope"], "k.py", "/", "h", "compile-only", ["sm_90"], False, "0", "now", "py"))
        out.add_capture(run, k)
        out.finish_run(run, complete=True, status="ok")
    return path


def test_hostile_bundle_through_every_exporter(hostile_bundle):
    with irscope.open(hostile_bundle) as b:
        cap = b.capture("add_kernel")
        stage = stage_graph(cap, "ttgir")
        assert any(a.get("python_line") == 24 for _, a in stage.graph.nodes(data=True))  # the hostile file matched
        _check_all(stage, f"V={EVIL}", EVIL_IR)
        diffed = stage_graph(cap, "ttgir", diff_against=b.capture("add_kernel"))
        _check_all(diffed, f"V={EVIL}")
        pipe = pipeline_graph(cap, other=cap)
        # Labels are cut to fit; the tooltip has the whole name.
        _check_all(pipe, "Inliner<script>alert('x')</script>{[bold]}", f"sample_kernels/{EVIL_FILE}",
                   f"Inliner{EVIL}")
        lineage = lineage_graph(cap, 24)
        _check_all(lineage, f"output = x + y # {EVIL}")
        passed = stage_graph(cap, None, pass_index=0)
        _check_all(passed, "Inliner<script>alert('x')</script>{[bold]}")
