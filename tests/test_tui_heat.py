"""The app's heat columns on real H200 profiles (the shared ``profiled`` fixture: the
checked-in capture with Nsight Compute's export imported by ``irscope profile import``):
the Python pane's column and each stage pane's show the samples the core gives
(:func:`irscope.core.profile.profile_of`), ``h`` switches them and the static costs,
``c`` moves a helper's samples to its call line, and the why panel gives the cursor
line's stall breakdown. Pilot tests and an SVG snapshot (pytest-textual-snapshot:
update with ``pytest tests/test_tui_heat.py --snapshot-update``, then look)."""

from __future__ import annotations

from textual.content import Content

import irscope
from irscope.core.profile import HotProfile, profile_of
from irscope.tui.app import make_app
from irscope.tui.screens.kernel import KernelScreen
from irscope.tui.widgets.heat import HEAT_CELLS, samples_text, share_text
from irscope.tui.widgets.ir_view import IRView
from irscope.tui.widgets.python_pane import PythonPane
from irscope.tui.widgets.why_panel import WhyPanel

from conftest import DATA, irscope as run_irscope
from tui_support import run_async, settle

SIZE = (130, 44)
HELPERS = "jit_helper_call"  # _load_tile and _gelu: @triton.jit helpers with their own lines


def _profiles(path, kernel: str) -> tuple[HotProfile, HotProfile]:
    cap = irscope.open(str(path)).capture(kernel)
    own, calls = profile_of(cap), profile_of(cap, call_sites=True)
    assert own is not None and calls is not None
    return own, calls


def _cell(view: IRView, y: int) -> str:
    """The heat column of content line ``y`` as drawn (the cells after the number and sign)."""
    text = "".join(seg.text for seg in view._gutter_strip(y))
    return text[view._gutter_digits + 2:][:HEAT_CELLS]


def _row(pane: PythonPane, line: int) -> int:
    return next(y for y in range(pane.line_count) if pane.row(y).line == line)


async def _settled(pilot) -> None:
    for _ in range(2):
        await settle(pilot)


@run_async
async def test_python_and_stage_columns_show_the_core_samples(profiled):
    pb = profiled.ncu(HELPERS)
    own, calls = _profiles(pb.path, pb.kernel)
    app = make_app(pb.path, keymap={}, kernel=pb.kernel)
    async with app.run_test(size=SIZE) as pilot:
        await _settled(pilot)
        screen = app.screen
        assert isinstance(screen, KernelScreen)
        pane = screen.query_one("#source", PythonPane)
        assert pane.show_heat and pane.heat_shown  # a profiled capture opens on its heat
        assert pane.helpers  # the helpers' lines are rows of the pane
        shown = {}
        for y in range(pane.line_count):
            r = pane.row(y)
            if r.line is None:
                continue
            lh = own.line(r.line, pane._row_file(r))
            want = lh.samples if lh is not None else 0
            assert pane.heat_at(y) == want, r.line
            assert _cell(pane, y) == share_text(want, own.total_samples), r.line
            shown[r.line] = want
        # every sample the core charges to a line is on a row (nothing lost on the way)
        assert sum(shown.values()) + own.unattributed == own.total_samples
        assert f"% of {own.total_samples} samples" in str(screen.query_one("#source-pane").border_subtitle)
        # every stage pane, the one it opens on (TTIR) first, shows the core's samples of that stage
        stage = screen.query_one("#stage", IRView)
        assert screen.stage == "ttir" and set(own.stages) == {"ttir", "ttgir", "llir", "ptx", "sass"}
        for name in ("ttir", "ttgir", "llir", "ptx", "sass"):
            if name != screen.stage:
                screen.select_stage(name)
                await _settled(pilot)
            assert stage.heat_shown, name
            want_stage = own.stage_heat(name)
            got = {y + 1: stage.heat_at(y) for y in range(stage.line_count) if stage.heat_at(y)}
            assert got == want_stage, name
            top = max(want_stage, key=lambda n: want_stage[n])
            assert _cell(stage, top - 1) == share_text(want_stage[top], own.total_samples)
            stage.goto_line(top - 1)  # the status line names the stage line's samples
            await _settled(pilot)
            assert f"stage line: {samples_text(want_stage[top])} samples" in screen.query_one("#stage-status").text.plain
        # c: a helper's samples move to the kernel line that calls it
        pane.focus()
        call_line = calls.lines[0].line
        await pilot.press("c")
        await _settled(pilot)
        for y in range(pane.line_count):
            r = pane.row(y)
            if r.line is not None:
                lh = calls.line(r.line, pane._row_file(r))
                assert pane.heat_at(y) == (lh.samples if lh is not None else 0), r.line
        assert pane.heat_at(_row(pane, call_line)) == calls.lines[0].samples > own.line(call_line).samples
        await pilot.press("c")
        await _settled(pilot)
        # h: the static costs take the column's place, in every pane; h again: heat
        await pilot.press("h")
        await _settled(pilot)
        assert not pane.show_heat and not pane.heat_shown and not stage.heat_shown
        assert "h: heat" in str(screen.query_one("#source-pane").border_subtitle)
        await pilot.press("h")
        await _settled(pilot)
        assert pane.heat_shown and stage.heat_shown
        # and on TTIR: h hides its column and brings it back
        screen.select_stage("ttir")
        await _settled(pilot)
        assert stage.heat_shown and {y + 1: stage.heat_at(y) for y in range(stage.line_count)
                                     if stage.heat_at(y)} == own.stage_heat("ttir")
        await pilot.press("h")
        await _settled(pilot)
        assert not stage.heat_shown
        await pilot.press("h")
        await _settled(pilot)
        assert stage.heat_shown


@run_async
async def test_why_panel_and_status_give_the_line_stall_breakdown(profiled):
    pb = profiled.ncu(HELPERS)
    own, _ = _profiles(pb.path, pb.kernel)
    hottest = own.lines[0]
    app = make_app(pb.path, keymap={}, kernel=pb.kernel)
    async with app.run_test(size=SIZE) as pilot:
        await _settled(pilot)
        screen = app.screen
        pane = screen.query_one("#source", PythonPane)
        pane.focus()
        pane.goto_line(_row(pane, hottest.line))
        await pilot.press("w")
        await _settled(pilot)
        text = screen.query_one("#why", WhyPanel).text().plain
        share = 100.0 * hottest.samples / own.total_samples
        assert f"heat line {hottest.line}: {hottest.samples} samples ({share:.1f}%), charged {hottest.how}" in text
        assert hottest.stalls and all(f"{reason} {n}" in text for reason, n in hottest.stalls.items())
        status = screen.query_one("#stage-status").text.plain
        assert f"heat {hottest.samples} samples ({share:.1f}%)" in status
        # a line with no sample says so
        for y in range(pane.line_count):
            if pane.row(y).line is None or pane.heat_at(y):
                continue
            pane.goto_line(y)
            if not any(pane.heat_at(r) for r in pane.statement_rows()):
                break
        await _settled(pilot)
        assert "heat: no sample on this line" in screen.query_one("#why", WhyPanel).text().plain


@run_async
async def test_h_without_a_profile_changes_nothing_and_says_why():
    app = make_app(DATA / "profiles" / HELPERS / "gpu.irscope", keymap={}, kernel="bias_gelu_rowsum_kernel")
    async with app.run_test(size=SIZE) as pilot:
        await _settled(pilot)
        pane = app.screen.query_one("#source", PythonPane)
        assert not pane.profiles and not pane.heat_shown
        width = pane._gutter_width
        await pilot.press("h")
        await _settled(pilot)
        assert not pane.show_heat and not pane.heat_shown and pane._gutter_width == width
        assert any("no profile attached" in str(n.message) for n in app._notifications)


@run_async
async def test_diff_screen_lines_tab_shows_the_sample_change(profiled):
    from textual.widgets import DataTable, TabbedContent

    from irscope.diff.compare import compare_captures
    from irscope.tui.screens.diff import DiffScreen

    pb = profiled.ncu("flash_attention")  # STAGE=1 and STAGE=3, each with its own launch's profile
    with irscope.open(str(pb.path)) as bundle:
        a, b = bundle.capture(pb.kernel, variant=0), bundle.capture(pb.kernel, variant=1)
        cmp = compare_captures(a, b, stages=("ttgir",), a_label="A", b_label="B")
    heat = cmp.heat
    assert heat is not None and heat.lines
    app = make_app(pb.path, keymap={})
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(DiffScreen(cmp))
        await pilot.pause()
        await pilot.press("l")
        await pilot.pause()
        screen = app.screen
        assert screen.query_one(TabbedContent).active == "tab-lines"
        table = screen.query_one("#diff-lines", DataTable)
        rows = {str(table.get_row_at(i)[0]): [str(c) for c in table.get_row_at(i)] for i in range(table.row_count)}
        for h in heat.lines:  # every measured line, its samples on both sides beside its op change
            assert rows[str(h.line)][1] == f"{h.before}->{h.after}", h.line
        ttgir = [str(c.label) for c in table.columns.values()].index("ttgir")
        for ln in cmp.lines:  # and every line whose op count changed keeps its counts
            c = ln.count("ttgir")
            if c is not None and c.changed:
                assert rows[str(ln.line)][ttgir] == f"{c.before}->{c.after}"


HOSTILE_GPU = "[bold red]H200[/] [link=http://x]y[/link] <b>"


@run_async
async def test_hostile_profile_stamp_is_shown_as_text(tmp_path):
    path = tmp_path / "hostile.irscope"
    path.write_bytes((DATA / "profiles" / "vector_add" / "gpu.irscope").read_bytes())
    run_irscope("profile", "import", path, "add_kernel", DATA / "profiles" / "vector_add" / "sass.csv",
                "--gpu", HOSTILE_GPU, "--tool-version", "[i]9[/i]", check=True)
    app = make_app(path, keymap={}, kernel="add_kernel")
    async with app.run_test(size=SIZE) as pilot:
        await _settled(pilot)
        screen = app.screen
        pane = screen.query_one("#source", PythonPane)
        assert pane.heat_shown
        # the frame keeps its title as markup, with the stamp's brackets escaped: drawn as typed
        legend = Content.from_markup(str(screen.query_one("#source-pane").border_subtitle)).plain
        assert HOSTILE_GPU in legend and "[i]9[/i]" in legend
        pane.focus()
        await pilot.press("w")
        await _settled(pilot)
        text = screen.query_one("#why", WhyPanel).text()
        assert HOSTILE_GPU in text.plain and not any("link" in str(span.style) for span in text.spans)


async def _hot_line_with_panel(pilot) -> None:
    await _settled(pilot)
    pane = pilot.app.screen.query_one("#source", PythonPane)
    pane.focus()
    pane.goto_line(_row(pane, 29))  # _gelu's sigmoid: the hottest line
    await pilot.press("w")
    await pilot.press("t")  # TTGIR: a stage with its heat column
    await _settled(pilot)


def test_snapshot_heat_column_and_stalls(snap_compare, profiled):
    pb = profiled.ncu(HELPERS)
    app = make_app(pb.path, keymap={}, kernel=pb.kernel)
    assert snap_compare(app, terminal_size=SIZE, run_before=_hot_line_with_panel)
