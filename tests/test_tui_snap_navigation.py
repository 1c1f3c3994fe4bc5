"""SVG snapshots of the kernel view's navigation states on tests/data/learner_sm90.irscope
(pytest-textual-snapshot, built by ``make_app`` with cursor blink off): the focused pane
named in the status line (and its ring), the ``#loc`` lines shown by ``l``, the IR pane
widened by ``+``, and the pass stepper showing TritonGPUCoalesce's whole description.

Update after an intended change:
``pytest tests/test_tui_snap_navigation.py --snapshot-update``, and look at the SVGs.
"""

from __future__ import annotations


from irscope.tui.app import make_app

from conftest import DATA
from tui_support import settle as _settle

LEARNER = DATA / "learner_sm90.irscope"
SIZE = (120, 40)


def _app(kernel: str = "rmsnorm_kernel"):
    return make_app(LEARNER, kernel=kernel, keymap={})


async def _ttgir_on_load(pilot) -> None:
    """TTGIR shown, the Python cursor on the first tl.load line."""
    await _settle(pilot)
    await pilot.press("t")
    await _settle(pilot)
    src = pilot.app.screen.query_one("#source")
    src.goto_line(next(i for i in range(src.line_count) if "tl.load(" in src.line_text(i)))
    await _settle(pilot)


async def _focus_on_stage(pilot) -> None:
    await _ttgir_on_load(pilot)
    await pilot.press("tab", "tab")  # the stage tabs, then the TTGIR pane
    await _settle(pilot)


async def _loc_shown(pilot) -> None:
    await _ttgir_on_load(pilot)
    await pilot.press("l")
    await _settle(pilot)
    await pilot.pause(2.5)  # the "#loc lines shown" notification times out
    await _settle(pilot)


async def _ir_widened(pilot) -> None:
    await _ttgir_on_load(pilot)
    await pilot.press("plus", "plus", "plus")
    await _settle(pilot)


async def _coalesce(pilot) -> None:
    await _settle(pilot)
    await pilot.press("p", "s")  # the pass stepper, on TTGIR
    await _settle(pilot)
    stepper = pilot.app.screen
    stepper.current = next(s.index for s in stepper._all if s.name == "TritonGPUCoalesce")
    await _settle(pilot)


def test_snapshot_focus_named_in_status_line(snap_compare):
    assert snap_compare(_app(), terminal_size=SIZE, run_before=_focus_on_stage)


def test_snapshot_loc_lines_shown(snap_compare):
    assert snap_compare(_app(), terminal_size=SIZE, run_before=_loc_shown)


def test_snapshot_ir_pane_widened(snap_compare):
    assert snap_compare(_app(), terminal_size=SIZE, run_before=_ir_widened)


def test_snapshot_coalesce_description_whole(snap_compare):
    assert snap_compare(_app(), terminal_size=SIZE, run_before=_coalesce)
