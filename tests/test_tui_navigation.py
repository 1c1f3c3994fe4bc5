"""Pilot tests of the kernel view's navigation basics, on what a learner opens
(tests/data/learner_sm90.irscope): the focus ring and the status line naming the
focused pane, a Tab order without hidden widgets, search naming its pane, escape after
a search, a kernel reopened where it was left, a stage switch following the Python
line, the "hide #loc" toggle, the IR pane's width keys, whole pass descriptions, a
palette listing each command once, help with readable key names, and a status line
with no blank field."""

from __future__ import annotations

import pytest
from textual.widget import Widget

from irscope.compiler.pass_catalog import describe
from irscope.core import open_bundle
from irscope.tui.app import IrscopeApp, make_app
from irscope.tui.commands import IrscopeCommands
from irscope.tui.kernel_nav import IR_SHARE_DEFAULT, IR_SHARE_MAX
from irscope.tui.loc_filter import is_loc_line
from irscope.tui.screens.browser import BrowserScreen
from irscope.tui.screens.help import HelpScreen
from irscope.tui.screens.kernel import KernelScreen
from irscope.tui.screens.passes import PassStepperScreen
from irscope.tui.widgets.ir_view import IRView
from irscope.tui.widgets.kernel_table import CaptureTable
from irscope.tui.widgets.pass_about import PassAbout
from irscope.tui.widgets.search_bar import SearchBar
from irscope.tui.widgets.status_line import SEPARATOR, StatusLine

from conftest import DATA
from tui_support import run_async

LEARNER = DATA / "learner_sm90.irscope"
SIZE = (120, 40)
_SHARED: dict = {}


def shared_bundle():
    """One open bundle for the module's apps (the core caches the parsed stages)."""
    if "bundle" not in _SHARED:
        _SHARED["bundle"] = open_bundle(str(LEARNER))
    return _SHARED["bundle"]


def new_app(**kw) -> IrscopeApp:
    return make_app(shared_bundle(), keymap={}, **kw)


async def settle(pilot, rounds: int = 3) -> None:
    for _ in range(rounds):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


async def open_kernel(pilot, kernel: str = "rmsnorm_kernel") -> KernelScreen:
    """Open ``kernel``'s first capture from the browser (enter on its row)."""
    app = pilot.app
    await settle(pilot)
    browser = app.screen
    assert isinstance(browser, BrowserScreen)
    at = next(i for i, r in enumerate(browser.shown) if r.capture.kernel == kernel)
    browser.query_one("#captures", CaptureTable).move_cursor(at)
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(app.screen, KernelScreen)
    return app.screen


def status(screen) -> str:
    return screen.query_one("#stage-status", StatusLine).text.plain


def line_with_ops(screen: KernelScreen, stage: str = "ttgir") -> int:
    """A 0-based source-pane line whose statement has ops in ``stage`` (a tl.load line)."""
    src = screen.query_one("#source", IRView)
    cap = screen.capture
    for i in range(src.line_count):
        if "tl.load(" in src.line_text(i) and cap.ops_at_line(screen.first_line + i).get(stage):
            return i
    raise AssertionError("no tl.load line with ops")


def shown_on_screen(widget: Widget) -> bool:
    node: Widget | None = widget
    while isinstance(node, Widget):
        if not node.display or not node.visible:
            return False
        node = node.parent if isinstance(node.parent, Widget) else None
    return True


# -- focus ----------------------------------------------------------------------------
@run_async
async def test_status_line_names_the_focused_pane_and_the_ring_follows_the_focus():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_kernel(pilot)
        assert status(screen).startswith("focus: Python")
        src_pane, stage_pane = screen.query_one("#source-pane"), screen.query_one("#stage-pane")

        def ring(pane) -> str:
            return pane.styles.border_top[1].hex

        assert ring(src_pane) != ring(stage_pane)
        source_ring = ring(src_pane)
        await pilot.press("tab")  # the stage tabs
        await settle(pilot, 1)
        assert status(screen).startswith("focus: stage tabs")
        await pilot.press("tab")  # the stage pane
        await settle(pilot, 1)
        assert status(screen).startswith("focus: TTIR")
        assert ring(stage_pane) == source_ring and ring(src_pane) != source_ring


@run_async
async def test_tab_order_skips_hidden_widgets():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_kernel(pilot)
        chain = screen.focus_chain
        assert all(shown_on_screen(w) for w in chain), chain
        assert screen.query_one(SearchBar) not in chain
        assert screen.query_one("#stage2") not in chain
        seen = set()
        for _ in range(len(chain) + 1):  # a whole round: never a hidden widget
            await pilot.press("tab")
            assert shown_on_screen(app.focused)
            seen.add(app.focused)
        assert seen == set(chain)
        await pilot.press("v")  # the split pane, once shown, is in the order
        await settle(pilot, 1)
        assert screen.query_one("#stage2") in screen.focus_chain
        await pilot.press("p")  # the pass stepper: its hidden "removed" pane is not
        await settle(pilot)
        stepper = app.screen
        assert isinstance(stepper, PassStepperScreen)
        assert all(shown_on_screen(w) for w in stepper.focus_chain)


# -- search and escape --------------------------------------------------------------------
@run_async
async def test_search_bar_names_the_pane_it_searches():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_kernel(pilot)
        bar = screen.query_one(SearchBar)
        await pilot.press("slash")
        assert "Python" in str(bar.border_title)
        await pilot.press("escape")
        screen.query_one("#stage", IRView).focus()
        await pilot.press("t")  # TTGIR
        await settle(pilot)
        await pilot.press("slash")
        assert "TTGIR" in str(bar.border_title)
        await pilot.press(*"tt.load", "enter")
        hits = len(screen.query_one("#stage", IRView).hits)
        assert hits and bar.shown and str(bar.border_title).startswith(f"search the TTGIR pane: {hits} line(s) match")


@run_async
async def test_escape_after_a_search_keeps_the_kernel_view():
    """The bug: after ``/`` + enter the bar was gone, and the next escape left the view."""
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_kernel(pilot)
        await pilot.press("slash", *"tl.load", "enter")
        src = screen.query_one("#source", IRView)
        assert src.hits
        await pilot.press("escape")  # closes the search bar
        assert app.screen is screen and not screen.query_one(SearchBar).shown
        await pilot.press("escape")  # clears the hits
        assert app.screen is screen and not src.hits
        await pilot.press("escape")  # now back
        assert isinstance(app.screen, BrowserScreen)


@run_async
async def test_escape_in_the_search_bar_closes_it_only():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_kernel(pilot)
        await pilot.press("slash", *"tl")
        await pilot.press("escape")
        assert app.screen is screen and not screen.query_one(SearchBar).shown
        assert app.focused is screen.query_one("#source")
        await pilot.press("escape")  # nothing open: back
        assert isinstance(app.screen, BrowserScreen)


# -- reopen, stage switch --------------------------------------------------------------------
@run_async
async def test_reopening_a_kernel_restores_its_stage_line_and_scroll():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_kernel(pilot, "_attn_fwd")
        await pilot.press("t")  # TTGIR
        await settle(pilot)
        src = screen.query_one("#source", IRView)
        src.goto_line(line_with_ops(screen))
        await settle(pilot)
        stage = screen.query_one("#stage", IRView)
        stage.focus()
        await pilot.press("down", "down", "down")
        await settle(pilot)
        before = (screen.stage, src.cursor_line, src.scroll_offset.y, stage.cursor_line, stage.scroll_offset.y)
        assert before[0] == "ttgir" and before[3] > 0
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        await pilot.press("enter")  # the same row
        await settle(pilot)
        again = app.screen
        assert isinstance(again, KernelScreen) and again is not screen
        src, stage = again.query_one("#source", IRView), again.query_one("#stage", IRView)
        after = (again.stage, src.cursor_line, src.scroll_offset.y, stage.cursor_line, stage.scroll_offset.y)
        assert after == before


@run_async
async def test_switching_stage_tabs_scrolls_to_the_python_lines_ops():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_kernel(pilot, "_attn_fwd")
        src = screen.query_one("#source", IRView)
        src.goto_line(line_with_ops(screen))
        await settle(pilot)
        stage = screen.query_one("#stage", IRView)
        for _ in range(2):  # TTGIR, then LLIR: each indexed already (in the background)
            await pilot.press("t")
            await settle(pilot)
            marks = sorted(stage.marks)
            assert marks, screen.stage
            assert stage.cursor_line == marks[0]
            top = stage.scroll_offset.y
            assert top <= stage.row_of(marks[0]) < top + stage.size.height


# -- hide #loc -------------------------------------------------------------------------------
@run_async
async def test_loc_lines_are_hidden_by_default_and_l_shows_them():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_kernel(pilot)
        await pilot.press("t")  # TTGIR: a location table and loc(...) suffixes
        await settle(pilot)
        stage = screen.query_one("#stage", IRView)
        text = screen.capture.stage("ttgir").text
        locs = [i for i, line in enumerate(text.splitlines()) if is_loc_line(line)]
        assert locs and stage.line_count == len(text.splitlines())
        assert stage.shown_count == stage.line_count - len(locs)
        assert not any(stage.is_shown(i) for i in locs)
        shown = [stage._display(i) for i in range(stage.line_count) if stage.is_shown(i)]
        assert not any(" loc(" in line for line in shown)
        marks_before = dict(stage.marks)
        await pilot.press("l")
        assert not app.hide_loc and stage.shown_count == stage.line_count
        assert any(" loc(" in stage._display(i) for i in range(stage.line_count))
        assert dict(stage.marks) == marks_before  # op lines keep their numbers
        await pilot.press("l")
        assert app.hide_loc and stage.shown_count == stage.line_count - len(locs)


# -- pane widths -----------------------------------------------------------------------------
@run_async
async def test_plus_and_minus_widen_and_narrow_the_ir_pane():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_kernel(pilot)
        src, ir = screen.query_one("#source-pane"), screen.query_one("#stage-pane")
        start = ir.size.width
        await pilot.press("plus", "plus")
        await settle(pilot, 1)
        assert app.ir_share == IR_SHARE_DEFAULT + 2 and ir.size.width > start
        for _ in range(IR_SHARE_MAX):
            await pilot.press("plus")
        await settle(pilot, 1)
        assert app.ir_share == IR_SHARE_MAX and src.size.width > 0
        for _ in range(IR_SHARE_MAX - IR_SHARE_DEFAULT):
            await pilot.press("minus")
        await settle(pilot, 1)
        assert app.ir_share == IR_SHARE_DEFAULT and ir.size.width == start


# -- pass descriptions ---------------------------------------------------------------------
@run_async
async def test_coalesce_description_is_shown_whole_at_120x40():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_kernel(pilot)
        await pilot.press("p")  # the TTIR passes; s: TTGIR
        await settle(pilot)
        stepper = app.screen
        assert isinstance(stepper, PassStepperScreen)
        await pilot.press("s")
        await settle(pilot)
        coalesce = next(s.index for s in stepper._all if s.name == "TritonGPUCoalesce")
        stepper.current = coalesce
        await settle(pilot)
        about = stepper.query_one("#pass-about", PassAbout)
        info = describe("TritonGPUCoalesce", "tritongpu-coalesce")
        assert info is not None and about.text.plain.startswith(info.summary)
        assert about.max_scroll_y == 0  # all of it on screen: nothing to scroll to
        assert about.size.height >= about.lines_needed(about.text)


# -- palette, help, status line ------------------------------------------------------------------
@run_async
async def test_palette_lists_each_command_once():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_kernel(pilot)
        provider = IrscopeCommands(screen)
        names = [name.casefold() for name, _help, _cmd in provider._commands()]
        system = {c.title.casefold() for c in app.get_system_commands(screen)}
        assert len(names) == len(set(names))
        assert not set(names) & system
        assert "help_quit" not in names and "hide #loc" in names
        assert "move cursor left a word" not in names  # the search input's editing keys


@run_async
async def test_help_shows_readable_key_names():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_kernel(pilot)
        await pilot.press("question_mark")
        await settle(pilot, 1)
        helped = app.screen
        assert isinstance(helped, HelpScreen)
        for row in helped.rows:
            assert "^" not in row.keys and "⏎" not in row.keys, row
            assert "_" not in row.description, row  # never an action name
        quit_row = next(r for r in helped.rows if r.action == "help_quit")
        assert quit_row.keys == "ctrl+c" and quit_row.description.startswith("Say how to quit")


@pytest.mark.parametrize("kernel", ["_attn_fwd", "rmsnorm_kernel", "block_ptr_matmul_kernel",
                                    "frontend_kernel", "ptxas_kernel"])
@run_async
async def test_status_line_never_shows_a_blank_field(kernel):
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_kernel(pilot, kernel)
        for keys in ((), ("tab",), ("tab", "tab"), ("t",), ("down",)):
            for key in keys:
                await pilot.press(key)
            await settle(pilot, 1)
            fields = status(screen).split(SEPARATOR)
            assert all(f.strip() for f in fields), status(screen)
        browser_status = live_status_of_browser(app)
        assert all(f.strip() for f in browser_status.split(SEPARATOR))


def live_status_of_browser(app) -> str:
    browser = next(s for s in app.screen_stack if isinstance(s, BrowserScreen))
    return browser.query_one("#browser-status", StatusLine).text.plain


def test_every_navigation_binding_is_listed_with_an_id():
    from irscope.tui.kernel_nav import KernelNavigation

    assert all(b.id for b in KernelNavigation.BINDINGS + PassAbout.BINDINGS)
    assert {b.id for b in KernelNavigation.BINDINGS} == {"kernel.toggle_loc", "kernel.widen_ir",
                                                         "kernel.narrow_ir"}


@run_async
async def test_plus_makes_the_ir_pane_taller_when_the_panes_stack():
    app = new_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_kernel(pilot)
        assert screen.has_class("-narrow")
        src, ir = screen.query_one("#source-pane"), screen.query_one("#stage-pane")
        assert src.size.width == ir.size.width  # stacked: both full width
        start = ir.size.height
        await pilot.press("plus", "plus")
        await settle(pilot, 1)
        assert ir.size.height > start and src.size.width == ir.size.width


@run_async
async def test_pass_stepper_hides_loc_lines_too_and_l_carries_back():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_kernel(pilot)
        await pilot.press("p")
        await settle(pilot)
        stepper = app.screen
        assert isinstance(stepper, PassStepperScreen)
        snap = stepper.query_one("#snapshot", IRView)
        hidden = [i for i in range(snap.line_count) if is_loc_line(snap.line_text(i))]
        assert hidden and not any(snap.is_shown(i) for i in hidden)
        await pilot.press("l")
        assert not app.hide_loc and all(snap.is_shown(i) for i in hidden)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen
        stage = screen.query_one("#stage", IRView)
        assert stage.shown_count == stage.line_count  # the kernel view follows the setting


@run_async
async def test_a_filtered_pane_moves_over_shown_lines_and_keeps_their_numbers():
    """IRView's display filter on a real TTGIR: up/down, home/end and search step over
    the hidden #loc lines; the gutter numbers the lines as in the file."""
    from textual.app import App, ComposeResult

    from irscope.tui.loc_filter import loc_filter

    text = shared_bundle().captures("_attn_fwd")[0].stage("ttgir").text

    class Harness(App):
        def compose(self) -> ComposeResult:
            yield IRView(text, id="view")

    app = Harness()
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one("#view", IRView)
        view.set_filter(*loc_filter(True))
        view.focus()
        await pilot.pause()
        shown = [i for i in range(view.line_count) if view.is_shown(i)]
        assert view.cursor_line == shown[0] and not is_loc_line(view.line_text(shown[0]))
        for expected in shown[1:6]:
            await pilot.press("down")
            assert view.cursor_line == expected
        await pilot.press("end")
        assert view.cursor_line == shown[-1]
        await pilot.press("home")
        assert view.cursor_line == shown[0]
        assert view.search("loc(") == 0  # the suffixes are not on screen
        assert view.search("tt.load") > 0 and all(view.is_shown(i) for i in view.hits)
        view.goto_line(shown[40])
        await pilot.pause()
        row = shown.index(shown[40]) - round(view.scroll_offset.y)
        strip = view.render_line(row)
        assert strip.text.lstrip().startswith(str(shown[40] + 1))  # the file's line number
        view.set_filter(*loc_filter(False))
        assert view.shown_count == view.line_count and view.cursor_line == shown[40]
