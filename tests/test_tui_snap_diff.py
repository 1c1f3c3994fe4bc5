"""SVG snapshots of the diff screens drawn on the CLI's change list (pytest-textual-snapshot):
two matmul_kernel configs after ``n`` (the second change, "change 2/N"), a folded run
opened with enter at 80x24, and the pass diff the stepper's ``d`` opens (the stage named
"Triton GPU IR", a layout delta inline). Built by ``make_app``, the factory the CLI uses.

Update after an intended change: ``pytest tests/test_tui_snap_diff.py --snapshot-update``
and look at the new SVGs before keeping them.
"""

from __future__ import annotations


from irscope.core import open_bundle
from irscope.diff.compare import compare_captures
from irscope.tui.app import make_app
from irscope.tui.screens.diff import DiffScreen
from irscope.tui.screens.passes import PassStepperScreen
from irscope.tui.widgets.diff_panes import DiffPanes

from conftest import DATA
from tui_support import settle as _settle

SAMPLES = DATA / "samples_sm90.irscope"
LEARNER = DATA / "learner_sm90.irscope"


def _matmul_diff_app():
    app = make_app(SAMPLES, keymap={})

    async def open_diff(pilot) -> None:
        a = app.bundle.capture("matmul_kernel", variant=0)
        b = app.bundle.capture("matmul_kernel", variant=1)
        app.open_diff(compare_captures(a, b, a_label=a.title(), b_label=b.title()), a=a, b=b)
        await _settle(pilot)
    return app, open_diff


def test_snapshot_diff_after_n_120x40(snap_compare):
    app, open_diff = _matmul_diff_app()

    async def run_before(pilot) -> None:
        await open_diff(pilot)
        await pilot.press("n")
        await _settle(pilot)
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_snapshot_diff_opened_run_80x24(snap_compare):
    app, open_diff = _matmul_diff_app()

    async def run_before(pilot) -> None:
        await open_diff(pilot)
        panes = pilot.app.screen.query_one(DiffPanes)
        row = next(i for i, r in enumerate(panes.rows) if r.kind == "fold")
        panes.pane_b.focus()
        panes.goto_row(row)
        await pilot.press("enter")
        await _settle(pilot)
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_snapshot_pass_diff_120x40(snap_compare):
    app = make_app(LEARNER, keymap={})

    async def run_before(pilot) -> None:
        with open_bundle(str(LEARNER)) as b:
            index = next(s.index for s in b.capture("block_ptr_matmul_kernel").pass_steps()
                         if s.name == "TritonGPURemoveLayoutConversions")
        cap = app.bundle.capture("block_ptr_matmul_kernel")
        app.push_screen(PassStepperScreen(cap, "ttgir", index=index))
        await _settle(pilot)
        await pilot.press("d")
        await _settle(pilot)
        assert isinstance(app.screen, DiffScreen)
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)
