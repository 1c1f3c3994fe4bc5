"""End to end in a real terminal, on what a learner opens (tests/data/learner_sm90.irscope:
attention, an RMSNorm built from @triton.jit helpers, a block-pointer GEMM, two kernels
that fail): tmux runs ``irscope open`` at 120x40 (and 80x24 where a test says so), keys go
in through ``send-keys``, and ``capture-pane -p`` must show the expected text (polled, never
a fixed sleep). One test per thing a learner must see."""

from __future__ import annotations

import sys
import time

import pytest

from conftest import DATA
from test_tui_tmux import Tmux, TIMEOUT, pytestmark  # noqa: F401  (skipped without tmux)

LEARNER = DATA / "learner_sm90.irscope"


def open_app(tmp_path, bundle=LEARNER, width=120, height=40) -> Tmux:
    """``irscope open BUNDLE`` in a fresh tmux session, no user keymap."""
    env = {"TERM": "xterm-256color", "XDG_CONFIG_HOME": str(tmp_path),
           "COLUMNS": str(width), "LINES": str(height)}
    return Tmux(f"{sys.executable} -m irscope open {bundle}", env, width=width, height=height)


def quit_app(tmux: Tmux) -> None:
    """``q`` ends the app (the test fails if it does not)."""
    tmux.keys("q")
    deadline = time.monotonic() + TIMEOUT
    while tmux.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not tmux.alive(), "q did not quit the app"


def test_helpers_have_their_own_sections_in_the_python_pane(tmp_path):
    """rmsnorm_kernel's helpers _mean_square and _rsqrt_eps show under the kernel in the
    Python pane, each headed with its file and lines; ``c`` charges their ops to the call
    line and the status line says so."""
    tmux = open_app(tmp_path)
    try:
        tmux.wait_for("rmsnorm_kernel", "6 of 6 captures")
        tmux.keys("Down", "Down", "Enter")  # row 3 of the bundle's captures
        # Every expected string is polled for: tmux can catch a frame half drawn.
        tmux.wait_for("def rmsnorm_kernel(", "def _mean_square", "def _rsqrt_eps",
                      "# ── helper _mean_square  rmsnorm_helpers")  # the pane cuts the rest
        tmux.keys("c")
        tmux.wait_for("helper ops: call line (c)")
        quit_app(tmux)
    finally:
        tmux.kill()


def test_failed_kernel_shows_its_error_and_jumps_to_the_line(tmp_path):
    """The browser shows the failure in its status column at 120 columns; opening
    frontend_kernel shows the error panel with the NameError; ``e`` puts the Python
    pane's cursor on line 15, the line the error names."""
    tmux = open_app(tmp_path)
    try:
        tmux.wait_for("6 of 6 captures", "failed (frontend)", "failed (cubin)")
        tmux.keys("Down", "Down", "Down", "Down", "Enter")  # row 5: frontend_kernel
        tmux.wait_for("NameError('undefined_name is not defined')", "Compile failed", "python line 12",
                      "bad_kernels.py:15", "e: go to bad_kernels.py:15")
        tmux.keys("e")
        tmux.wait_for("python line 15", "15      tl.store(x_ptr + offs, x + undefined_n")
        tmux.keys("Escape")
        tmux.wait_for("6 of 6 captures")
        quit_app(tmux)
    finally:
        tmux.kill()


def test_status_line_names_the_focused_pane_after_tab(tmp_path):
    """The kernel view opens with the focus on the Python pane, and says so; Tab moves it
    to the stage tabs, then to the stage pane, and the status line follows."""
    tmux = open_app(tmp_path)
    try:
        tmux.wait_for("rmsnorm_kernel", "6 of 6 captures")
        tmux.keys("Down", "Down", "Enter")  # row 3: rmsnorm_kernel
        tmux.wait_for("focus: Python", "TTGIR")
        tmux.keys("Tab")
        tmux.wait_for("focus: stage tabs")
        tmux.keys("Tab")
        tmux.wait_for("focus: TTIR")
        quit_app(tmux)
    finally:
        tmux.kill()


def test_escape_after_a_search_stays_in_the_kernel_view(tmp_path):
    """``/`` names the pane it searches; after enter the bar stays as the result line;
    escape closes it, a second escape clears the hits, and the view is still there (a
    third escape goes back to the browser)."""
    tmux = open_app(tmp_path)
    try:
        tmux.wait_for("_attn_fwd", "6 of 6 captures")
        tmux.keys("Enter")  # row 1: _attn_fwd
        tmux.wait_for("focus: Python", "TTGIR")
        tmux.keys("/")
        tmux.wait_for("search the Python pane")
        tmux.type("tl.load")
        tmux.keys("Enter")
        tmux.wait_for("line(s) match  n/N")
        tmux.keys("Escape")
        tmux.wait_for("search closed")
        tmux.keys("Escape")
        tmux.wait_for("search hits cleared")
        # The note times out and uncovers the status line: still the kernel view.
        shown = tmux.wait_for("focus: Python", "Jump next stage")
        assert "6 of 6 captures" not in shown
        tmux.keys("Escape")
        tmux.wait_for("6 of 6 captures")
        quit_app(tmux)
    finally:
        tmux.kill()


def test_n_in_the_diff_screen_moves_to_the_next_change(tmp_path):
    """Marking the two _attn_fwd captures and pressing ``d`` opens the diff on the first
    stage that changed, at its first change ("change 1/N", N the CLI's count of that
    stage); ``n`` moves to the next one and the status line says "change 2/N"."""
    from irscope.core import open_bundle
    from irscope.diff.compare import compare_captures

    with open_bundle(str(LEARNER)) as b:
        a, c = b.capture("_attn_fwd", variant=0), b.capture("_attn_fwd", variant=1)
        ids = (a.id, c.id)
        cmp = compare_captures(a, c)
        total = next(len(d.changes) for d in cmp.stages.values() if d.changes)
    tmux = open_app(tmp_path)
    try:
        tmux.wait_for("_attn_fwd", "6 of 6 captures")
        tmux.keys("Space", "Space")  # rows 1 and 2: the two _attn_fwd variants
        tmux.wait_for(f"marked: #{ids[0]}, #{ids[1]}")
        tmux.keys("d")
        tmux.wait_for(f"change 1/{total}", "unchanged op(s)", "Triton IR", "n/N: next/previous change")
        tmux.keys("n")
        tmux.wait_for(f"change 2/{total}")
        tmux.keys("N")
        tmux.wait_for(f"change 1/{total}")
        quit_app(tmux)
    finally:
        tmux.kill()
