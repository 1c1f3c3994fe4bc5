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
