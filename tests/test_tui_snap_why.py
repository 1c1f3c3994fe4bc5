"""The app's "why" column and panel on tests/data/why_sm90_sm80.irscope (a strided
gather whose 16-bit loads go one element at a time, a GEMM tile too large for its
warps, so it spills): the glyphs and the panel show what ``irscope explain --json``
says for the same line (the core computes every fact once). A Pilot test and an SVG
snapshot (pytest-textual-snapshot: update with
``pytest tests/test_tui_snap_why.py --snapshot-update``, then look)."""

from __future__ import annotations

import json

from textual.widgets import Input

from irscope.tui.app import make_app
from irscope.tui.screens.kernel import KernelScreen
from irscope.tui.widgets.python_pane import PythonPane
from irscope.tui.widgets.why_panel import WhyPanel

from conftest import DATA, irscope
from tui_support import run_async

WHY = DATA / "why_sm90_sm80.irscope"
SIZE = (120, 40)


async def _settle(pilot) -> None:
    for _ in range(4):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    for inp in pilot.app.screen.query(Input):
        inp.cursor_blink = False


def _explain_json(kernel: str, target: str) -> dict:
    p = irscope("explain", WHY, kernel, "--target", target, "--json", check=True)
    return json.loads(p.stdout)


def _row_of_line(pane: PythonPane, line: int) -> int:
    return next(y for y in range(pane.line_count) if pane.row(y).line == line)


def _glyphs(pane: PythonPane, y: int) -> str:
    """The why column of row ``y`` as drawn (the gutter's cells after the number and sign)."""
    strip = pane._gutter_strip(y)
    text = "".join(seg.text for seg in strip)
    return text[pane._gutter_digits + 2:].strip()


@run_async
async def test_gather_glyphs_and_panel_agree_with_explain_json():
    want = _explain_json("gather_kernel", "sm_90")
    narrow = [ln for ln in want["lines"]
              if any(a["elements"] is not None and a["max_elements"] is not None and a["elements"] < a["max_elements"]
                     for a in ln["global_accesses"])]
    assert [ln["line"] for ln in narrow] == [16]  # the strided load
    line = narrow[0]
    access = line["global_accesses"][0]
    assert (access["bits"], access["elements"], access["max_elements"]) == (16, 1, 8)
    app = make_app(WHY, keymap={}, kernel="gather_kernel", target="sm_90")
    async with app.run_test(size=SIZE) as pilot:
        await _settle(pilot)
        screen = app.screen
        assert isinstance(screen, KernelScreen)
        pane = screen.query_one("#source", PythonPane)
        assert pane.explanation is not None
        assert pane.why_kinds == ("narrow", "remark")
        for ln in want["lines"]:  # a glyph exactly where the JSON has the fact
            y = _row_of_line(pane, ln["line"])
            glyphs = _glyphs(pane, y)
            assert ("n" in glyphs) == (ln in narrow), ln["line"]
            assert ("r" in glyphs) == bool(ln["remarks"]), ln["line"]
        assert "why: n narrow access  r remark" in str(screen.query_one("#source-pane").border_subtitle)
        panel = screen.query_one("#why", WhyPanel)
        assert not panel.shown
        pane.focus()
        pane.goto_line(_row_of_line(pane, 16))
        await pilot.press("w")
        await _settle(pilot)
        assert panel.shown
        text = panel.text().plain
        assert "python line 16" in text
        assert f"load {access['bits']} bits, {access['elements']} of {access['max_elements']} elements, " \
               f"{access['instructions']} instructions" + (", masked" if access["masked"] else "") in text
        assert line["remarks"] and all(r in text for r in line["remarks"])
        hints = [h for h in want["hints"] if h["line"] == 16]
        assert hints and all(h["text"] in text and all(e in text for e in h["evidence"]) for h in hints)
        # the panel follows the cursor: line 17's contiguous store is as wide as it can be
        pane.goto_line(_row_of_line(pane, 17))
        await _settle(pilot)
        text = panel.text().plain
        store = next(ln for ln in want["lines"] if ln["line"] == 17)["global_accesses"][0]
        assert "python line 17" in text and f"store {store['bits']} bits" in text \
            and "global access narrower" not in text
        await pilot.press("w")
        await _settle(pilot)
        assert not panel.shown


@run_async
async def test_gemm_spill_glyphs_and_panel_agree_with_explain_json():
    want = _explain_json("big_tile_gemm_kernel", "sm_90")
    spilling = {ln["line"]: ln["spills"] for ln in want["lines"] if ln["spills"]}
    assert sum(spilling.values()) + want["unattributed_spills"] == want["total_spills"] > 0
    smem = {c["python_line"] for c in want["conversions"] if c["via"] == "shared_memory"}
    assert smem
    app = make_app(WHY, keymap={}, kernel="big_tile_gemm_kernel", target="sm_90")
    async with app.run_test(size=SIZE) as pilot:
        await _settle(pilot)
        pane = app.screen.query_one("#source", PythonPane)
        for ln in want["lines"]:
            glyphs = _glyphs(pane, _row_of_line(pane, ln["line"]))
            assert ("s" in glyphs) == (ln["line"] in spilling), ln["line"]
            assert ("m" in glyphs) == (ln["line"] in smem), ln["line"]
        line = max(spilling, key=lambda n: spilling[n])
        pane.focus()
        pane.goto_line(_row_of_line(pane, line))
        await pilot.press("w")
        await _settle(pilot)
        text = app.screen.query_one("#why", WhyPanel).text().plain
        assert f"spills: {spilling[line]} (" in text


async def _on_narrow_load_with_panel(pilot) -> None:
    await _settle(pilot)
    pane = pilot.app.screen.query_one("#source", PythonPane)
    pane.focus()
    pane.goto_line(_row_of_line(pane, 16))
    await pilot.press("w")
    await _settle(pilot)


def test_snapshot_why_column_and_panel(snap_compare):
    app = make_app(WHY, keymap={}, kernel="gather_kernel", target="sm_90")
    assert snap_compare(app, terminal_size=SIZE, run_before=_on_narrow_load_with_panel)
