"""SVG snapshots of a failed capture's error panel in the kernel view (pytest-textual-snapshot),
on tests/data/learner_sm90.irscope: frontend_kernel (a NameError: no stage compiled, the
panel takes the stage pane) and ptxas_kernel (ptxas refused the PTX: the panel sits above
the stages that compiled), at 120x40 and 80x24; and the browser at 80x24 with its status
column pinned.

Update after an intended change: ``pytest tests/test_tui_snap_failures.py --snapshot-update``
and look at the new SVGs before keeping them.
"""

from __future__ import annotations

import pytest

from irscope.tui.app import make_app

from conftest import DATA
from tui_support import settle as _settle

BUNDLE = "learner_sm90.irscope"
"""Opened from tests/data (the ``in_data`` fixture), so the panel's ``irscope cat`` line
names the bundle as a user who opened it there would see it, on any checkout."""


@pytest.fixture(autouse=True)
def in_data(monkeypatch):
    monkeypatch.chdir(DATA)


async def _jumped(pilot) -> None:
    """After ``e``: the Python pane (or the PTX stage) on the line the error names."""
    await _settle(pilot)
    await pilot.press("e")
    await _settle(pilot)


def test_snapshot_frontend_error_panel(snap_compare):
    app = make_app(BUNDLE, kernel="frontend_kernel", keymap={})
    assert snap_compare(app, terminal_size=(120, 40), run_before=_jumped)


def test_snapshot_ptxas_error_panel(snap_compare):
    app = make_app(BUNDLE, kernel="ptxas_kernel", keymap={})
    assert snap_compare(app, terminal_size=(120, 40), run_before=_settle)


def test_snapshot_ptxas_error_panel_80x24(snap_compare):
    app = make_app(BUNDLE, kernel="ptxas_kernel", keymap={})
    assert snap_compare(app, terminal_size=(80, 24), run_before=_settle)


def test_snapshot_browser_failed_status_80x24(snap_compare):
    app = make_app(BUNDLE, keymap={})
    assert snap_compare(app, terminal_size=(80, 24), run_before=_settle)
