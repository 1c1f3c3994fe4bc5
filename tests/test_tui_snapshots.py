"""SVG snapshots of the main screens (pytest-textual-snapshot), built by ``make_app``, the
factory the CLI uses, with every cursor blink off so the pictures are stable.

Update after an intended change: ``pytest tests/test_tui_snapshots.py --snapshot-update``
and look at the new SVGs before keeping them.
"""

from __future__ import annotations


from irscope.tui.app import make_app
from irscope.tui.widgets.ir_view import IRView
from irscope.tui.widgets.kernel_table import CaptureTable

from conftest import DATA
from tui_support import settle as _settle

BUNDLE = DATA / "samples_sm90.irscope"


def _app(**kw):
    return make_app(BUNDLE, keymap={}, **kw)


async def _browser(pilot) -> None:
    await _settle(pilot)


async def _kernel_on_dot(pilot) -> None:
    """The matmul kernel view on its tl.dot line, TTGIR shown, the wgmma op's details open."""
    await _settle(pilot)
    screen = pilot.app.screen
    await pilot.press("t")
    await _settle(pilot)
    src = screen.query_one("#source", IRView)
    src.goto_line(next(i for i in range(src.line_count) if "tl.dot(" in src.line_text(i)))
    await _settle(pilot)
    stage = screen.query_one("#stage", IRView)
    stage.focus()
    stage.goto_line(min(stage.marks))
    await pilot.press("enter")
    await _settle(pilot)


async def _help(pilot) -> None:
    await _settle(pilot)
    await pilot.press("question_mark")
    await _settle(pilot)


async def _browser_marked_light(pilot) -> None:
    await _settle(pilot)
    await pilot.press("down", "space", "space", "ctrl+t")
    pilot.app.screen.query_one(CaptureTable).move_cursor(0)
    await _settle(pilot)


def test_snapshot_browser(snap_compare):
    assert snap_compare(_app(), terminal_size=(120, 40), run_before=_browser)


def test_snapshot_browser_light_marked(snap_compare):
    assert snap_compare(_app(), terminal_size=(120, 40), run_before=_browser_marked_light)


def test_snapshot_kernel_view_details(snap_compare):
    app = _app(kernel="matmul_kernel")
    assert snap_compare(app, terminal_size=(120, 40), run_before=_kernel_on_dot)


def test_snapshot_kernel_view_80x24(snap_compare):
    app = _app(kernel="matmul_kernel")
    assert snap_compare(app, terminal_size=(80, 24), run_before=_kernel_on_dot)


def test_snapshot_help(snap_compare):
    app = _app(kernel="matmul_kernel")
    assert snap_compare(app, terminal_size=(120, 40), run_before=_help)
