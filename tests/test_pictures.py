"""The pictures a learner reads: legends wherever colour means something, `--lines N
--diff` focused after pairing, a pipeline that fits a screen with nested passes under
their parent, small layout SVGs, tooltips that read back exactly, and the elements a
convert_layout moves. Every picture here is rendered by the real `dot` and read back
from its SVG; the captures are the checked-in ones of tests/data.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import irscope
from irscope.export import lineage_graph, module_graph, pipeline_graph, stage_graph
from irscope.export.layout_dot import render_layout
from irscope.export.layout_op import op_layouts
from irscope.export.layout_picture import picture_of
from irscope.export.layout_svg import MOVE_LOOK
from irscope.export.render import render
from irscope.export.style import clean

SVG = "{http://www.w3.org/2000/svg}"
XLINK_TITLE = "{http://www.w3.org/1999/xlink}title"
DATA = Path(__file__).parent / "data"
SAMPLES = DATA / "samples_sm90.irscope"
LEARNER = DATA / "learner_sm90.irscope"
BLOCKED = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"

# The screen a pipeline picture must fit: 1920 x 1200 px at 96 dpi, in the points an
# SVG from dot is measured in (px = pt x 4/3): what irscope.export.pipeline.SCREEN_PT
# lays it out for. Heights are whole rows of fixed-size nodes, so they do not move
# with the fonts; the checked-in captures come to 865-899 pt.
SCREEN_PT = (1440, 900)


def _svg_size(svg: bytes) -> tuple[float, float]:
    root = ET.fromstring(svg)
    return float(root.get("width", "0pt")[:-2]), float(root.get("height", "0pt")[:-2])


def _texts(svg: bytes) -> str:
    return " ".join(t for el in ET.fromstring(svg).iter(f"{SVG}text") for t in el.itertext())


def _node_fills(graph, svg: bytes) -> dict[str, str]:
    """Node key -> the fill dot drew it with (render.to_dot names node i ``n<i>``)."""
    ids = {f"n{i}": n for i, n in enumerate(graph.graph.nodes)}
    out = {}
    for g in ET.fromstring(svg).iter(f"{SVG}g"):
        if g.get("class") != "node":
            continue
        title = g.find(f"{SVG}title").text
        shape = next((e for e in g.iter() if e.tag in (f"{SVG}polygon", f"{SVG}ellipse", f"{SVG}path")), None)
        if title in ids and shape is not None:
            out[ids[title]] = shape.get("fill")
    return out


def _check_legend(graph) -> None:
    """The legend names every fill that nodes are drawn with, and the SVG draws it:
    its title ``legend:``, each name, and a swatch of each colour."""
    svg = render(graph, "svg")
    legend = graph.graph.graph["legend"]
    assert legend, graph.title
    texts = _texts(svg)
    assert "legend:" in texts
    swatches = {p.get("fill") for p in ET.fromstring(svg).iter(f"{SVG}polygon")}
    for name, colour in legend:
        assert clean(name) in texts, name
        assert not colour or colour in swatches, (name, colour)  # (a line style has no colour)
    colours = {c for _, c in legend if c}
    drawn = _node_fills(graph, svg)
    # The Python source node says what it is in its label; every other fill is named.
    coloured = {k: f for k, f in drawn.items() if f not in ("#ffffff", "white", "none")
                and graph.graph.nodes[k].get("kind") != "source"}
    assert coloured
    assert set(coloured.values()) <= colours, set(coloured.values()) - colours


@pytest.fixture(scope="module")
def samples():
    with irscope.open(SAMPLES) as b:
        yield b


def test_every_coloured_picture_has_a_legend(samples):
    mm = samples.capture("#2")
    other = samples.capture("#3")
    _check_legend(stage_graph(mm, "ttgir", lines=(66, 66), diff_against=other))  # green/orange/red/grey
    _check_legend(stage_graph(mm, None, pass_index=15))  # TritonGPUCoalesce: added/changed
    _check_legend(stage_graph(mm, "ttgir", lines=(60, 70)))  # dialect fills
    _check_legend(pipeline_graph(mm, other))
    _check_legend(lineage_graph(mm, 66))
    with irscope.open(LEARNER) as b:
        _check_legend(pipeline_graph(b.capture("rmsnorm_kernel")))


def _removed_lines(cli_json: dict) -> list[int]:
    return [n["line"] for n in cli_json["nodes"] if n["kind"] == "removed"]


def _export_json(*args: str) -> dict:
    p = subprocess.run([sys.executable, "-m", "irscope", "export", *args, "--format", "json"],
                       capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_lines_and_diff_list_only_the_ops_of_those_lines(samples):
    other = samples.capture("#3")
    whole = _export_json(str(SAMPLES), "#2", "--diff", f"{SAMPLES}:#3", "--max-nodes", "0")
    focused = _export_json(str(SAMPLES), "#2", "--lines", "66", "--diff", f"{SAMPLES}:#3")
    everywhere, here = _removed_lines(whole), _removed_lines(focused)
    # The other side's ops of line 66, by the core's one rule.
    at_66 = {op.line for op in other.ops_at_line(66).get("ttgir", [])}
    assert here and set(here) <= at_66
    assert set(here) == set(everywhere) & at_66  # paired on whole modules, then focused
    assert len(everywhere) > len(here)
    assert all(n["python_line"] == 66 for n in focused["nodes"] if n["kind"] == "op")


def _nodes_at(graph, svg: bytes) -> dict[str, tuple[float, float, float, float]]:
    """Node key -> (left, top, right, bottom) as dot placed it."""
    ids = {f"n{i}": n for i, n in enumerate(graph.graph.nodes)}
    out = {}
    for g in ET.fromstring(svg).iter(f"{SVG}g"):
        if g.get("class") != "node":
            continue
        poly = next((e for e in g.iter() if e.tag == f"{SVG}polygon"), None)
        if poly is None:
            continue
        pts = [tuple(map(float, p.split(","))) for p in poly.get("points").split()]
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        out[ids[g.find(f"{SVG}title").text]] = (min(xs), min(ys), max(xs), max(ys))
    return out


@pytest.mark.parametrize("bundle,kernel", [(SAMPLES, "#2"), (SAMPLES, "bias_gelu_rowsum_kernel"),
                                           (LEARNER, "#2"), (LEARNER, "rmsnorm_kernel")])
def test_pipeline_fits_a_screen_with_nested_passes_under_their_parent(bundle, kernel):
    with irscope.open(bundle) as b:
        cap = b.capture(kernel)
        graph = pipeline_graph(cap)
        passes = cap.passes()
    svg = render(graph, "svg")
    width, height = _svg_size(svg)
    assert width <= SCREEN_PT[0] and height <= SCREEN_PT[1], (width, height)
    assert 0.5 <= width / height <= 3.0  # columns, not one tall column or one wide row
    assert len(graph.graph.graph["columns"]) >= 3
    at = _nodes_at(graph, svg)
    nested = [p for p in passes if p.step.parent is not None]
    assert nested, "the fixture has nested passes (the inliner's canonicalizers, the pipeliner's steps)"
    for p in nested:
        child, parent = at[f"pass{p.index}"], at[f"pass{p.step.parent}"]
        assert child[1] > parent[3]  # below its parent
        assert child[0] < parent[2] and parent[0] < child[2]  # in its parent's column
        assert graph.graph.nodes[f"pass{p.index}"]["cluster"].startswith("nest:")


def test_a_64x64_layout_svg_is_under_500_kb_with_every_cell():
    pic = picture_of(BLOCKED, [64, 64])
    svg = render_layout([pic], "svg")
    assert len(svg) < 500_000, len(svg)
    root = ET.fromstring(svg)
    cells = [u for u in root.iter(f"{SVG}use") if u.find(f"{SVG}title") is not None]
    assert len(cells) == 64 * 64
    assert len(re.findall(rb"<text[^>]*>w\d+ l\d+ r\d+", svg)) == 64 * 64  # text in every cell


HOSTILE_TOOLTIP = r'''module {
  tt.func public @k() {
    %0 = arith.constant {note = "q\22uote \\ two\\\\back \N \G \E2\80\A6 \l & &amp; <b>"} 1 : i32
    tt.return
  }
}
'''


def test_a_tooltip_with_quotes_and_backslashes_reads_back_exactly():
    module = irscope.parse_text(HOSTILE_TOOLTIP, "ttir").module
    graph = module_graph(module, title="k")
    op = next(o for o in module.ops() if o.name == "arith.constant")
    want = clean(op.text.strip(), 400)
    assert '"' in want and "\\22" in want and "\\\\" in want and "\\N" in want
    svg = render(graph, "svg")
    titles = [a.get(XLINK_TITLE) for a in ET.fromstring(svg).iter(f"{SVG}a")]
    assert want in titles
    assert not any("\u2216" in (t or "") for t in titles)  # nothing substituted


def test_convert_layout_marks_the_elements_that_change_owner():
    # matmul #5's convert_layout (mma -> blocked, 64x32): elements stay in their
    # thread, move across lanes of a warp, and across warps.
    with irscope.open(SAMPLES) as b:
        module = b.capture("#5").stage("ttgir").module
    found = op_layouts(module, 219)
    assert found.op_name == "ttg.convert_layout"
    src, dst = found.pictures
    svg = render_layout(found.pictures, "svg", op_name=found.op_name, sources=1)
    from test_layout_picture import svg_cells

    cells = svg_cells(svg, pid=1)
    assert len(cells) == dst.numel
    colour = {kind: look[0] for kind, look in MOVE_LOOK.items()}
    seen = set()
    for index, after in dst.elements():
        before = src.owners_of(index)
        # The model's own owners, compared here without irscope.export.layout_moves.
        if set(before) == set(after):
            want = None
        elif {(o.warp, o.lane) for o in after} <= {(o.warp, o.lane) for o in before}:
            want = "register"
        elif {o.warp for o in after} <= {o.warp for o in before}:
            want = "lane"
        else:
            want = "warp"
        seen.add(want)
        assert cells[index][3] == (colour[want] if want else None), index
        if want:
            assert "; before: " in cells[index][2]
    assert {"register", "lane", "warp"} <= seen
    texts = _texts(svg)
    assert "owner change from operand 0" in texts and "another warp: 1024" in texts
    # The source side is not marked; PNG marks the same cells (dot's table borders).
    assert all(c[3] is None for c in svg_cells(svg, pid=0).values())
    dot = render_layout(found.pictures, "dot", op_name=found.op_name, sources=1).decode()
    assert dot.count(f'BORDER="2" COLOR="{colour["warp"]}"') == 1024 + 1  # cells + legend swatch


def test_layout_cli_reports_the_owner_changes_of_a_conversion():
    p = subprocess.run([sys.executable, "-m", "irscope", "layout", str(SAMPLES), "#5", "--op-line", "219",
                        "--format", "json"], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    result = json.loads(p.stdout)["layouts"][1]
    assert result["owner_changes"] == {"from": "operand 0", "same": 64, "register": 192, "lane": 768, "warp": 1024}
    assert "1024 to another warp" in p.stderr


def test_plain_cells_of_one_fill_are_drawn_as_one_wider_rect():
    # Past 16,384 elements there is no hover text: runs of one fill become one <use>.
    from irscope.export.layout_colours import owner_fill

    pic = picture_of(BLOCKED, [256, 128])
    svg = render_layout([pic], "svg")
    root = ET.fromstring(svg)
    rects = {r.get("id"): r for r in root.iter(f"{SVG}rect")}
    grid = next(g for g in root.iter(f"{SVG}g") if g.get("id") == "p0_grid")
    rows = grid.findall(f"{SVG}g")
    assert len(rows) == 256
    m = pic.layout
    for r, row in enumerate(rows):
        fills = []
        for use in row.iter(f"{SVG}use"):
            rect = rects[use.get("href")[1:]]
            fills += [rect.get("fill")] * round(float(rect.get("width")) / 5)  # 5 pt cells
        want = [owner_fill(o[0].warp, o[0].lane, m.num_warps, m.threads_per_warp)
                for o in (pic.owners_of((r, c)) for c in range(128))]
        assert fills == want, r
    assert len(list(grid.iter(f"{SVG}use"))) < 256 * 128 / 4  # sizePerThread 8: runs of 8


def test_lines_and_pass_list_only_the_erased_ops_of_those_lines(samples):
    # RemoveLayoutConversions (pass 18 of matmul #2) erases 35 ops over several lines.
    from irscope.ir.python_lines import python_line

    mm = samples.capture("#2")
    before = mm.side_module(mm.pass_at(18).step.before)
    line_of = {op.line: python_line(op.location, mm.file) for op in before.ops()}
    whole = stage_graph(mm, None, pass_index=18, max_nodes=0)
    erased = {a["line"] for _, a in whole.graph.nodes(data=True) if a.get("kind") == "removed"}
    lines = sorted({mm.statements.head(line_of[n]) for n in erased if line_of.get(n)})
    assert len(lines) >= 2
    for line in lines:
        focused = stage_graph(mm, None, pass_index=18, lines=(line, line))
        here = {a["line"] for _, a in focused.graph.nodes(data=True) if a.get("kind") == "removed"}
        assert here == {n for n in erased if line_of.get(n) and mm.statements.head(line_of[n]) == line}, line
