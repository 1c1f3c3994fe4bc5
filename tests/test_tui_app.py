"""Pilot tests of ``irscope open``: browser, kernel view, details, split, search, palette,
help, themes, keymaps, narrow terminals, and workers that never block input.

Every app is built by :func:`irscope.tui.app.make_app`, the factory the CLI uses, on the
checked-in bundle of real Triton 3.6 sm_90 captures.
"""

from __future__ import annotations

import threading

import pytest
from textual.widgets import DataTable

from irscope.tui.widgets.kernel_table import CaptureTable

from irscope.core import open_bundle
from irscope.errors import IrscopeError
from irscope.tui import screen_data
from irscope.tui.app import IrscopeApp, load_keymap, make_app
from irscope.tui.screens.browser import BrowserScreen
from irscope.tui.screens.help import HelpScreen
from irscope.tui.screens.kernel import KernelScreen
from irscope.tui.widgets.ir_view import IRView
from irscope.tui.widgets.op_details import OpDetails
from irscope.tui.widgets.search_bar import SearchBar
from irscope.tui.widgets.stage_tabs import StageTabs

from conftest import DATA, irscope
from tui_support import run_async

BUNDLE = DATA / "samples_sm90.irscope"
SIZE = (120, 40)


_SHARED: dict = {}


def shared_bundle():
    """One open bundle for the module's apps: the core caches each capture's parsed
    stages, links and origins, so only the first test pays for parsing them."""
    if "bundle" not in _SHARED:
        _SHARED["bundle"] = open_bundle(str(BUNDLE))
    return _SHARED["bundle"]


@pytest.fixture(scope="module")
def core():
    """The bundle through the core API (its own handle): what the app must agree with."""
    with open_bundle(str(BUNDLE)) as b:
        yield b


def new_app(**kw) -> IrscopeApp:
    return make_app(shared_bundle(), keymap=kw.pop("keymap", {}), **kw)


async def settle(pilot, rounds: int = 3) -> None:
    """Let workers finish and their results land (a worker's result may start another)."""
    for _ in range(rounds):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def dot_line(screen: KernelScreen) -> int:
    """0-based source-pane line of the kernel's ``tl.dot`` call."""
    src = screen.query_one("#source", IRView)
    return next(i for i in range(src.line_count) if "tl.dot(" in src.line_text(i))


async def open_matmul(pilot) -> KernelScreen:
    app = pilot.app
    await settle(pilot)
    browser = app.screen
    at = next(i for i, r in enumerate(browser.shown) if r.capture.kernel == "matmul_kernel")
    browser.query_one("#captures", CaptureTable).move_cursor(at)
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(app.screen, KernelScreen)
    return app.screen


# -- browser -------------------------------------------------------------------------

@run_async
async def test_browser_lists_every_capture_with_its_resources(core):
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        table = browser.query_one("#captures", CaptureTable)
        assert table.row_count == len(core.captures()) == 6
        first_mm = core.capture("matmul_kernel")
        row = next(r for r in browser.shown if r.capture.id == first_mm.id)
        cells = {k: v.plain for k, v in row.cells.items()}
        res = first_mm.resources
        assert cells["regs"] == str(first_mm.row.registers)
        assert cells["warps"] == str(res.num_warps) == "8"
        assert cells["stages"] == "3"
        assert cells["shared"] == "144.0 KiB"
        assert cells["occupancy"] == "1x8w regs"
        assert cells["triton"] == "3.6.0" and cells["target"] == "sm_90"
        assert cells["compile"].endswith("s")
        # the short variant keeps only the fields that differ between the 4 configs
        assert "BLOCK_SIZE_M=128" in cells["variant"] and "stride" not in cells["variant"]


@run_async
async def test_browser_sorts_by_key_and_header_click_and_filters():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        browser = app.screen
        table = browser.query_one("#captures", CaptureTable)
        await pilot.press("s")  # id -> kernel
        assert browser.sort_key == "kernel"
        kernels = [r.capture.kernel for r in browser.shown]
        assert kernels == sorted(kernels)
        await pilot.press("r")
        assert [r.capture.kernel for r in browser.shown] == sorted(kernels, reverse=True)
        # a click on the "regs" header sorts by registers, a second click reverses
        x = table.column_x("regs")
        await pilot.click("#captures", offset=(x + 2, 0))
        await pilot.pause()
        assert browser.sort_key == "regs" and not browser.sort_reverse
        regs = [r.capture.row.registers for r in browser.shown]
        assert regs == sorted(regs)
        await pilot.click("#captures", offset=(x + 2, 0))
        await pilot.pause()
        assert browser.sort_reverse
        await pilot.press("slash", *"matmul")
        assert table.row_count == 4
        assert all(r.capture.kernel == "matmul_kernel" for r in browser.shown)
        await pilot.press("escape")
        assert table.row_count == 6 and app.focused is table


@run_async
async def test_browser_click_a_row_and_enter_opens_the_kernel_view():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        browser = app.screen
        await pilot.click("#captures", offset=(5, 3))  # header row 0, then rows 1.. (row 2)
        await pilot.pause()
        picked = browser.current_row()
        assert browser.shown.index(picked) == 2
        assert isinstance(app.screen, BrowserScreen)  # a first click only moves the cursor
        await pilot.click("#captures", offset=(5, 3))  # a second click opens it
        await settle(pilot)
        assert isinstance(app.screen, KernelScreen)
        assert app.screen.capture.id == picked.capture.id
        await pilot.press("escape")
        assert app.screen is browser


@run_async
async def test_marking_two_captures_and_d_opens_the_diff_screen():
    from irscope.tui.screens.diff import DiffScreen

    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        browser = app.screen
        await pilot.press("d")  # nothing marked: a warning, no screen
        assert app.screen is browser
        await pilot.press("down", "space", "space")  # marks rows 1 and 2
        assert len(browser.marked) == 2
        a, b = (next(r.capture for r in browser.rows if r.capture.id == i) for i in browser.marked)
        await pilot.press("d")
        await settle(pilot, rounds=4)
        assert isinstance(app.screen, DiffScreen)
        assert app.screen.comparison.a == a.title() and app.screen.comparison.b == b.title()


# -- kernel view -----------------------------------------------------------------------

@run_async
async def test_python_line_marks_its_ops_and_titles_the_tabs(core):
    log = []
    app = new_app()
    async with app.run_test(size=SIZE, message_hook=log.append) as pilot:
        screen = await open_matmul(pilot)
        cap = core.capture(screen.capture.kernel, target=screen.capture.target,
                           variant=screen.capture.variant)
        src = screen.query_one("#source", IRView)
        line = dot_line(screen)
        src.focus()
        src.goto_line(line)
        await settle(pilot)
        py = screen.first_line + line
        want = cap.ops_at_line(py)  # the core's rule, per stage
        tabs = screen.query_one(StageTabs)
        for stage in screen.stages:
            assert tabs.count(stage) == len(want.get(stage, [])), stage
            label = tabs.query_one(f"#tab-{stage}").label.plain
            assert label.endswith(f" {len(want.get(stage, []))}")
        assert len(want["ttgir"]) >= 1
        view = screen.query_one("#stage", IRView)
        assert view.marks == {op.line - 1: "linked" for op in want[screen.stage]}
        # the stage pane follows: the first op of the line is in view
        first = min(view.marks)
        top = round(view.scroll_offset.y)
        assert top <= first < top + view.size.height
        moved = [m for m in log if isinstance(m, IRView.CursorMoved) and m.ir_view is src]
        assert moved and moved[-1].line == line
        await pilot.press("down")
        await pilot.pause()
        assert view.marks == {op.line - 1: "linked" for op in cap.ops_at_line(py + 1)[screen.stage]}


@run_async
async def test_switching_tabs_by_key_and_click():
    log = []
    app = new_app()
    async with app.run_test(size=SIZE, message_hook=log.append) as pilot:
        screen = await open_matmul(pilot)
        assert screen.stage == "ttir"
        await pilot.press("t")
        await settle(pilot)
        assert screen.stage == "ttgir"
        view = screen.query_one("#stage", IRView)
        assert view.line_text(0) == screen.capture.stage("ttgir").text.splitlines()[0]
        assert view.language == "mlir"
        await pilot.click("#tab-ptx")
        await settle(pilot)
        assert screen.stage == "ptx" and view.language == "ptx"
        activated = [m for m in log if type(m).__name__ == "TabActivated"]
        assert activated and activated[-1].tab.id == "tab-ptx"
        await pilot.press("T")
        await settle(pilot)
        assert screen.stage == "llir"


@run_async
async def test_op_details_show_types_layout_grid_locations_origin_and_links():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_matmul(pilot)
        await pilot.press("t")  # TTGIR: layouts and a pass origin
        await settle(pilot)
        src = screen.query_one("#source", IRView)
        src.goto_line(next(i for i in range(src.line_count) if "tl.load(a_ptrs" in src.line_text(i)))
        await settle(pilot)
        view = screen.query_one("#stage", IRView)
        load_line = next(ln for ln in sorted(view.marks) if "tt.load" in view.line_text(ln)
                         or "async_copy" in view.line_text(ln))
        view.focus()
        view.goto_line(load_line)
        await pilot.press("enter")
        await settle(pilot)
        panel = screen.query_one(OpDetails)
        assert panel.shown
        text = str(panel.query_one("#op-details-body").render())
        detail = screen._detail
        assert detail.line == load_line + 1 and detail.stage == "ttgir"
        assert "types:" in text and "layout #" in text
        assert detail.layouts and any(lay.grid is not None for lay in detail.layouts)
        assert "lane per element, colour = warp" in text
        assert "location:" in text and "matmul_autotune.py" in text
        assert detail.created_by is not None and "created by:" in text
        assert "became in LLIR" in text and "came from TTIR" in text
        assert detail.links.get("llir"), "a TTGIR load lowers to LLVM IR"
        # ] jumps to the first linked LLVM instruction, and the Python pane follows
        target = detail.links["llir"][0].line
        py_before = src.cursor_line
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert screen.stage == "llir"
        assert screen.query_one("#stage", IRView).cursor_line == target - 1
        assert src.cursor_line == py_before  # the op was on this Python line already
        assert screen._detail.stage == "llir"
        # [ goes back to TTGIR
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert screen.stage == "ttgir"
        await pilot.press("escape")  # closes the details first
        assert not panel.shown and isinstance(app.screen, KernelScreen)


@run_async
async def test_split_view_shows_two_stages_with_linked_highlights():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_matmul(pilot)
        await pilot.press("t", "v")
        await settle(pilot)
        second = screen.query_one("#stage2", IRView)
        assert screen.split and second.display
        assert screen.split_stage() == "llir"
        assert second.line_text(0) == screen.capture.stage("llir").text.splitlines()[0]
        main = screen.query_one("#stage", IRView)
        cap = screen.capture
        op_line = next(op.line for op in screen.indexes["ttgir"].module.ops()
                       if op.name.startswith("arith.") and cap.links_for_op("ttgir", op.line).links.get("llir"))
        main.focus()
        main.goto_line(op_line - 1)
        await settle(pilot)
        linked = cap.links_for_op("ttgir", op_line).links["llir"]
        hits = {ln for ln, kind in second.marks.items() if kind == "hit"}
        assert hits == {o.line - 1 for o in linked}
        assert second.cursor_line == linked[0].line - 1
        await pilot.press("v")
        assert not second.display


@run_async
async def test_search_with_n_and_shift_n_in_the_focused_pane():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_matmul(pilot)
        src = screen.query_one("#source", IRView)
        src.focus()
        src.goto_line(0)
        expected = [i for i in range(src.line_count) if "tl.load" in src.line_text(i)]
        assert len(expected) >= 2
        await pilot.press("slash")
        bar = screen.query_one(SearchBar)
        assert app.focused is bar
        await pilot.press(*"tl.load", "enter")
        assert app.focused is src and src.cursor_line == expected[0]
        await pilot.press("n")
        assert src.cursor_line == expected[1]
        await pilot.press("N")
        assert src.cursor_line == expected[0]
        await pilot.press("N")  # wraps to the last
        assert src.cursor_line == expected[-1]
        # the stage pane searches its own text
        stage = screen.query_one("#stage", IRView)
        stage.focus()
        await pilot.press("slash", *"tt.dot", "enter")
        assert stage.search_query == "tt.dot" and "tt.dot" in stage.line_text(stage.cursor_line)


@run_async
async def test_command_palette_runs_screen_actions_and_opens_captures():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_matmul(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Split")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen and screen.split
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"open bias_gelu")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, KernelScreen)
        assert app.screen.capture.kernel == "bias_gelu_rowsum_kernel"


@run_async
async def test_help_lists_every_binding_with_its_id():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_matmul(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        helped = app.screen
        assert isinstance(helped, HelpScreen)
        ids = {r.id for r in helped.rows}
        for cls in (IrscopeApp, KernelScreen, IRView, StageTabs):
            for b in cls.BINDINGS:
                assert b.id and b.id in ids, (cls.__name__, b.key)
        table = helped.query_one("#help-table", DataTable)
        assert table.row_count == len(helped.rows)
        split = next(r for r in helped.rows if r.id == "kernel.split")
        assert (split.keys, split.description) == ("v", "Split")
        await pilot.press("escape")
        assert app.screen is screen


@run_async
async def test_every_irscope_binding_has_an_id():
    from irscope.tui.screens import browser, help as help_screen, kernel
    from irscope.tui.widgets import kernel_table, search_bar, stage_tabs

    classes = [IrscopeApp, browser.BrowserScreen, kernel.KernelScreen, help_screen.HelpScreen,
               IRView, kernel_table.CaptureTable, search_bar.SearchBar, stage_tabs.StageTabs]
    missing = [(c.__name__, b.key) for c in classes for b in c.BINDINGS if not b.id]
    assert not missing


@run_async
async def test_keymap_remaps_a_key_and_help_shows_it(tmp_path, monkeypatch):
    path = tmp_path / "keymap.toml"
    path.write_text('[keymap]\n"kernel.split" = "ctrl+s"\n')
    monkeypatch.setenv("IRSCOPE_KEYMAP", str(path))
    keymap = load_keymap()
    assert keymap == {"kernel.split": "ctrl+s"}
    app = make_app(shared_bundle(), keymap=keymap)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_matmul(pilot)
        await pilot.press("v")
        assert not screen.split  # v is no longer split
        await pilot.press("ctrl+s")
        assert screen.split
        await pilot.press("question_mark")
        row = next(r for r in app.screen.rows if r.id == "kernel.split")
        assert row.keys == "ctrl+s"  # spelled out, never ^s


def test_bad_keymap_files_are_one_line_errors(tmp_path, monkeypatch):
    bad = tmp_path / "bad.toml"
    bad.write_text("this is = = not toml")
    with pytest.raises(IrscopeError, match="cannot read keymap"):
        load_keymap(bad)
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('"kernel.split" = 3\n')
    with pytest.raises(IrscopeError, match="binding.id"):
        load_keymap(wrong)
    monkeypatch.setenv("IRSCOPE_KEYMAP", str(tmp_path / "absent.toml"))
    with pytest.raises(IrscopeError, match="not found"):
        load_keymap()
    monkeypatch.delenv("IRSCOPE_KEYMAP")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no default file: no keymap
    assert load_keymap() == {}


@run_async
async def test_theme_toggle_switches_light_and_dark():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.dark
        await pilot.press("ctrl+t")
        assert app.theme == "textual-light" and not app.dark
        await pilot.press("ctrl+t")
        assert app.theme == "textual-dark"


@run_async
async def test_80x24_stacks_the_panes():
    app = new_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#captures", CaptureTable)
        assert table.region.height >= 10  # the table keeps the screen
        screen = await open_matmul(pilot)
        assert screen.has_class("-narrow")
        src = screen.query_one("#source-pane").region
        stage = screen.query_one("#stage-pane").region
        assert src.width == stage.width == 80 and src.bottom <= stage.y
        assert screen.query_one("#stage", IRView).region.height >= 5
        await pilot.resize_terminal(140, 40)
        await pilot.pause()
        assert not screen.has_class("-narrow")


@run_async
async def test_a_slow_bundle_read_does_not_block_input(monkeypatch):
    release = threading.Event()
    real = screen_data.browser_rows

    def slow_rows(bundle):
        assert release.wait(30), "the test never released the read"
        return real(bundle)

    monkeypatch.setattr(screen_data, "browser_rows", slow_rows)
    app = new_app()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            browser = app.screen
            table = browser.query_one("#captures", CaptureTable)
            assert table.row_count == 0 and not browser.rows
            assert "reading" in str(browser.query_one("#browser-status").render())
            await pilot.press("ctrl+t")  # handled while the worker is still reading
            assert app.theme == "textual-light"
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("escape")
            assert app.screen is browser and table.row_count == 0
            release.set()
            await settle(pilot)
            assert table.row_count == 6
    finally:
        release.set()


@run_async
async def test_make_app_opens_a_kernel_directly(core):
    app = new_app(kernel="matmul_kernel", variant="1")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, KernelScreen)
        assert app.screen.capture.id == core.capture("matmul_kernel", variant="1").id


def test_make_app_rejects_bad_input_before_starting(tmp_path):
    with pytest.raises(IrscopeError):
        make_app(tmp_path / "missing.irscope", keymap={})
    with pytest.raises(IrscopeError, match="no kernel"):
        make_app(BUNDLE, "no_such_kernel", keymap={})


def test_cli_open_errors_are_one_line(tmp_path):
    for args in (["open", tmp_path / "missing.irscope"], ["open", BUNDLE, "no_such_kernel"],
                 ["open", BUNDLE, "--target", "sm_90"]):
        p = irscope(*args)
        assert p.returncode == 1, args
        assert p.stderr.startswith("irscope: error: ") and p.stderr.count("\n") == 1, p.stderr
        assert "Traceback" not in p.stderr


def test_run_opens_the_app_only_for_a_terminal_without_no_open(monkeypatch):
    from types import SimpleNamespace

    from irscope.cli import run_cmd

    class Tty:
        def __init__(self, tty):
            self.tty = tty

        def isatty(self):
            return self.tty

    monkeypatch.setattr(run_cmd.sys, "stdin", Tty(True))
    monkeypatch.setattr(run_cmd.sys, "stdout", Tty(True))
    assert run_cmd._should_open(SimpleNamespace(no_open=False))
    assert not run_cmd._should_open(SimpleNamespace(no_open=True))
    monkeypatch.setattr(run_cmd.sys, "stdout", Tty(False))  # piped: never wait on the app
    assert not run_cmd._should_open(SimpleNamespace(no_open=False))
