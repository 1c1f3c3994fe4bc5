"""Layout pictures: each drawn cell shows what the picture data says, colours, modes, escaping.

The data itself (owners, banks) is checked against Triton in test_layout_cli.py;
here the SVG that dot draws is read back and compared cell by cell with it.
"""

from __future__ import annotations

import colorsys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irscope
from irscope.errors import IrscopeError
from irscope.export.layout_colours import bank_fill, owner_fill, text_colour
from irscope.export.layout_dot import (
    TOOLTIPS_UP_TO,
    html_text,
    is_compact,
    layout_dot,
    render_layout,
)
from irscope.export.layout_op import module_layouts, op_layouts
from irscope.export.layout_picture import parse_shape, picture_of

SVG = "{http://www.w3.org/2000/svg}"
BUNDLE = Path(__file__).parent / "data" / "samples_sm90.irscope"
BLOCKED = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
NVMMA = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"
# Columns 0 and 2 only: half the elements have no owner (a non-uniform picture).
HALF = ("#ttg.linear<{register = [[0, 2]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = [], "
        "block = []}>")


def svg_cells(svg: bytes, pid: int = 0) -> dict:
    """index -> (texts, fill, tooltip, move mark) of every element cell drawn for picture
    ``pid`` (irscope.export.layout_svg: a ``<use>`` of a fill rect holding the hover
    text, which starts with the index, then the cell's texts and its move mark)."""
    root = ET.fromstring(svg)
    rects = {r.get("id"): r for r in root.iter(f"{SVG}rect")}
    grid = next(g for g in root.iter(f"{SVG}g") if g.get("id") == f"p{pid}_grid")
    cells: dict = {}
    for row in grid.findall(f"{SVG}g"):
        cur = None
        for el in row:
            if el.tag == f"{SVG}use":
                ref = rects[el.get("href")[1:]]
                title = el.find(f"{SVG}title")
                if title is not None:
                    where = title.text.split("]")[0].lstrip("[")
                    cur = tuple(int(x) for x in where.split(", "))
                    cells[cur] = ([], ref.get("fill"), title.text, None)
                elif cur is not None and ref.get("fill") == "none":  # the move mark over the cell
                    cells[cur] = cells[cur][:3] + (ref.get("stroke"),)
            elif el.tag == f"{SVG}text" and cur is not None and el.get("class") != "ax":
                cells[cur][0].extend(t for t in el.itertext())
    return cells


def _owner_text(o):
    return f"w{o.warp} l{o.lane} r{o.register}"


@pytest.mark.parametrize("shape", [[16, 64], [16, 32], [16, 16]], ids=["one-owner", "two-owners", "four-owners"])
def test_every_cell_shows_its_owners(shape):
    pic = picture_of(BLOCKED, shape)
    cells = svg_cells(render_layout([pic], "svg"))
    assert len(cells) == pic.numel
    m = pic.layout
    for index, owners in pic.elements():
        texts, fill, tip, _ = cells[index]
        shown = [_owner_text(o) for o in owners]
        assert texts == (shown if len(shown) <= 2 else [shown[0], f"\u00d7{len(shown)}"])
        assert fill == owner_fill(owners[0].warp, owners[0].lane, m.num_warps, m.threads_per_warp)
        listed = shown[0] if len(shown) == 1 else f"{len(shown)} owners: " + ", ".join(shown)
        assert tip == f"[{index[0]}, {index[1]}]: {listed}"


def test_shared_cells_show_bank_and_offset():
    pic = picture_of(NVMMA, [16, 64])
    assert pic.kind == "shared" and pic.element_bits == 16
    cells = svg_cells(render_layout([pic], "svg"))
    assert len(cells) == 16 * 64
    for index, (texts, fill, _, _) in cells.items():
        assert texts == [f"b{pic.banks[index]}", f"@{pic.offsets[index]}"]
        assert fill == bank_fill(pic.banks[index])
    # The 128-byte swizzle spreads each column of 8 rows over 8 different 16-byte bank groups.
    assert len({pic.banks[(r, 0)] for r in range(8)}) == 8


def test_shared_picture_of_a_pipelined_buffer_draws_one_buffer():
    sw = "#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>"
    pic = picture_of(sw, [3, 32, 64], element_bits=16)
    assert pic.shape == (32, 64) and "one buffer of 3" in pic.note
    assert pic.to_json()["elements"][0] == {"index": [0, 0], "bank": 0, "offset": 0}


def test_one_and_three_dims():
    pic = picture_of(f"#ttg.slice<{{dim = 1, parent = {BLOCKED}}}>", [128])
    svg = render_layout([pic], "svg")
    assert set(svg_cells(svg)) == {(i,) for i in range(128)}
    texts = [t.text for t in ET.fromstring(svg).iter(f"{SVG}text")]
    assert {"0", "32", "64", "96", "+31"} <= {(t or "").strip() for t in texts}  # rows of 32
    b3 = "#ttg.blocked<{sizePerThread = [1, 1, 4], threadsPerWarp = [2, 4, 4], warpsPerCTA = [2, 1, 2], order = [2, 1, 0]}>"
    pic3 = picture_of(b3, [2, 4, 8])
    svg3 = render_layout([pic3], "svg")
    assert len(svg_cells(svg3)) == 64
    assert {"[0, :, :]", "[1, :, :]"} <= {t.text for t in ET.fromstring(svg3).iter(f"{SVG}text")}


def test_colours_warp_hue_lane_shade():
    fills = [owner_fill(w, 0, 4, 32) for w in range(4)]
    assert len(set(fills)) == 4
    hues = [colorsys.rgb_to_hls(*(int(f[i:i + 2], 16) / 255 for i in (1, 3, 5)))[0] for f in fills]
    assert min(abs(a - b) % 1 for a in hues for b in hues if a != b) > 0.15  # well apart
    light = [colorsys.rgb_to_hls(*(int(f[i:i + 2], 16) / 255 for i in (1, 3, 5)))[1]
             for f in (owner_fill(1, lane, 4, 32) for lane in range(32))]
    assert light == sorted(light, reverse=True) and light[0] - light[-1] > 0.3
    assert text_colour("#ffffff") == "#000000" and text_colour("#000000") == "#ffffff"
    assert len({bank_fill(b) for b in range(32)}) == 32


def test_compact_mode():
    pic = picture_of(BLOCKED, [64, 128])
    assert is_compact(pic) and not is_compact(pic, False) and not is_compact(picture_of(BLOCKED, [64, 64]))
    cells = svg_cells(render_layout([pic], "svg"))
    assert len(cells) == 64 * 128 and all(texts == [] for texts, _, _, _ in cells.values())
    assert all(tip for _, _, tip, _ in cells.values())  # owners still on hover
    big = picture_of(BLOCKED, [256, 128])
    assert big.numel > TOOLTIPS_UP_TO
    source = layout_dot([big])
    assert "TOOLTIP" not in source and source.count("<TD") > big.numel
    with pytest.raises(IrscopeError, match="--full"):
        layout_dot([big], compact=False)


def test_unowned_elements_are_marked():
    pic = picture_of(HALF, [32, 4])
    assert pic.replication() == (0, 1)
    cells = svg_cells(render_layout([pic], "svg"))
    assert cells[(0, 1)][0] == ["\u2014"] and cells[(0, 1)][2] == "[0, 1]: no owner"
    assert cells[(0, 0)][0] == ["w0 l0 r0"]
    compact = layout_dot([pic], compact=True)
    assert compact.count('BORDER="1" COLOR="#000000"') == 64  # the 64 unowned cells


def test_legend_names_warps_lanes_and_replication():
    svg = render_layout([picture_of(BLOCKED, [16, 16])], "svg")
    text = " ".join(t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}text"))
    assert "warp (hue)" in text and "lane (shade)" in text and "w3" in text
    assert "4 warps x 32 lanes x 8 registers" in text and "held by 4 owners" in text


def test_html_text_escapes_for_graphviz():
    assert html_text("<a href='x'>&\"") == "&lt;a href=&#x27;x&#x27;&gt;&amp;&quot;"
    assert html_text("a\\Nb\\\\") == "a\\\\Nb\\\\\\\\"  # dot would read \N as the node name
    assert html_text("x\x00\x1b\udcff") == "x  \ufffd"


@pytest.mark.parametrize("text,shape,bits", [("64x64", (64, 64), None), ("128x32xf16", (128, 32), 16),
                                             ("256", (256,), None), ("4x8x16xi8", (4, 8, 16), 8)])
def test_parse_shape(text, shape, bits):
    assert parse_shape(text) == (shape, bits)


@pytest.mark.parametrize("text", ["", "x", "64x", "64 x 64", "-4", "0x8", "64x64x", "64x64xq9", "9" * 9,
                                  "64x64\udcff", "[bold]4"])
def test_parse_shape_rejects(text):
    with pytest.raises(IrscopeError):
        parse_shape(text)


# ------------------------------------------------------------------ ops of a stage
@pytest.fixture(scope="module")
def matmul_ttgir():
    with irscope.open(BUNDLE) as b:
        return b.capture("matmul_kernel", variant="1").stage("ttgir").module


def test_module_layouts_lists_each_distinct_layout_once(matmul_ttgir):
    sides = module_layouts(matmul_ttgir)
    keys = [(s.picture.encoding, s.picture.shape) for s in sides]
    assert len(keys) == len(set(keys)) >= 10
    kinds = {s.picture.encoding_kind for s in sides}
    assert {"blocked", "slice", "nvidia_mma", "nvmma_shared"} <= kinds
    assert all(s.role.startswith("line ") for s in sides)
    assert len(module_layouts(matmul_ttgir, max_elements=4096)) < len(sides)


def test_op_layouts_of_a_scalar_op_is_an_error(matmul_ttgir):
    line = next(op.line for op in matmul_ttgir.ops() if op.name == "arith.muli" and "tensor" not in op.types)
    with pytest.raises(IrscopeError, match="no tensor result"):
        op_layouts(matmul_ttgir, line)


HOSTILE_TTGIR = r'''#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0], note = "<script>alert('x')</script> [bold]b[/bold] {\N} \\ &amp;"}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k() {
    %cst = arith.constant {tag = "</text><script>"} dense<0.0> : tensor<16x16xf32, #blocked> loc("<b>\x.py":1:1)
    %y = ttg.convert_layout %cst : tensor<16x16xf32, #blocked> -> tensor<16x16xf32, #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [2, 2], order = [0, 1], x = "\"'<&>[red]"}>> loc("q\"uote":2:2)
    tt.return
  }
}
'''


def test_hostile_ir_is_drawn_escaped():
    module = irscope.parse_text(HOSTILE_TTGIR, "ttgir").module
    found = op_layouts(module, 5)
    assert [s.role for s in found.sides] == ["operand 0", "result 0"]
    svg = render_layout(found.pictures, "svg", op_name=found.op_name, sources=1)
    root = ET.fromstring(svg)
    assert not [e for e in root.iter() if e.tag.split("}")[-1] in ("script", "foreignObject")]
    # One style element: the grids' own (irscope.export.layout_svg), nothing from the IR.
    from irscope.export.layout_svg import _STYLE
    assert [f"<style>{e.text}</style>" for e in root.iter(f"{SVG}style")] == [_STYLE]
    drawn = "".join("".join(root.itertext()).split())
    assert 'x="\\"\'<&>[red]"' in drawn  # the inline encoding, literally (spaces dropped above)
    assert "ttg.convert_layout" in drawn
    js = found.to_json()
    assert js["layouts"][1]["encoding"].endswith('x = "\\"\'<&>[red]"}>')
    # The alias's hostile note reaches the encoding text of the operand, literally.
    assert "<script>alert('x')</script>" in js["layouts"][0]["encoding"]
    assert "\\N" in js["layouts"][0]["encoding"]


def test_missing_dot_is_a_one_line_error(monkeypatch, tmp_path):
    pic = picture_of(BLOCKED, [16, 16])
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(IrscopeError, match="apt-get install graphviz") as err:
        render_layout([pic], "png")
    assert "\n" not in str(err.value)
    assert render_layout([pic], "dot").startswith(b"digraph")  # DOT needs no binary


def test_tooltips_can_be_left_out():
    pic = picture_of(BLOCKED, [16, 16])
    plain = render_layout([pic], "svg", tooltips=False)
    assert svg_cells(plain) == {} and b"hover" not in plain
    assert len(plain) < len(render_layout([pic], "svg"))


TINY = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>"


@settings(max_examples=8, deadline=None)
@given(st.lists(st.text(st.one_of(st.characters(), st.sampled_from(list("<>&\"'\\{}[]N/\x00\x1b\udcff\ufffe"))),
                        min_size=1, max_size=40), min_size=1, max_size=12))
def test_any_title_reaches_the_svg_literally(titles):
    from irscope.export.style import clean

    pics = [picture_of(TINY, [2], title=t) for t in titles]
    root = ET.fromstring(render_layout(pics, "svg", sources=1, op_name=titles[0]))
    drawn = "".join("".join(root.itertext()).split())
    for t in titles:
        assert "".join(clean(t).split()) in drawn
