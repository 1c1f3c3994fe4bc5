"""End to end in a real terminal: tmux runs ``irscope open`` on the sample bundle at 120x40,
keys go in through ``send-keys``, and ``capture-pane -p`` must show the expected lines at
each step (polled with a timeout, never a fixed sleep).

Path: open matmul_kernel, search the Python pane for its ``tl.dot`` line, show TTGIR
(the tab titles count that line's ops), open the pass stepper and step three passes,
go back, mark two captures and diff them, quit.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from irscope.core import open_bundle

from conftest import DATA, ROOT

BUNDLE = DATA / "samples_sm90.irscope"
TIMEOUT = 60.0

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Tmux:
    """One detached tmux session running a command."""

    def __init__(self, command: str, env: dict[str, str], width: int = 120, height: int = 40):
        self.name = f"irscope-e2e-{uuid.uuid4().hex[:8]}"
        flags = [a for k, v in env.items() for a in ("-e", f"{k}={v}")]
        subprocess.run(["tmux", "new-session", "-d", "-s", self.name, "-x", str(width),
                        "-y", str(height), *flags, command], check=True, cwd=ROOT)

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def type(self, text: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text], check=True)

    def screen(self) -> str:
        p = subprocess.run(["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True,
                           text=True)
        return p.stdout if p.returncode == 0 else ""

    def alive(self) -> bool:
        return subprocess.run(["tmux", "has-session", "-t", self.name],
                              capture_output=True).returncode == 0

    def wait_for(self, *needles: str, timeout: float = TIMEOUT) -> str:
        """Poll the pane until every needle is on it; fail with the last screen."""
        deadline = time.monotonic() + timeout
        shown = ""
        while time.monotonic() < deadline:
            shown = self.screen()
            if all(n in shown for n in needles):
                return shown
            time.sleep(0.1)
        raise AssertionError(f"waited {timeout:.0f}s for {needles!r}; the pane shows:\n{shown}")

    def wait_for_match(self, pattern: str, timeout: float = TIMEOUT) -> str:
        """Poll the pane until the regular expression matches it (a frame can be half drawn)."""
        deadline = time.monotonic() + timeout
        shown = ""
        while time.monotonic() < deadline:
            shown = self.screen()
            if re.search(pattern, shown):
                return shown
            time.sleep(0.1)
        raise AssertionError(f"waited {timeout:.0f}s for /{pattern}/; the pane shows:\n{shown}")

    def kill(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


def test_open_a_kernel_step_passes_diff_and_quit(tmp_path):
    with open_bundle(str(BUNDLE)) as b:
        cap = b.captures("matmul_kernel")[0]
        first = cap.source.first_line
        dot = next(i for i, line in enumerate(cap.source.text.splitlines()) if "tl.dot(" in line)
        py_line = first + dot
        ttgir_ops = len(cap.ops_at_line(py_line)["ttgir"])
        n_ttgir_passes = len(cap.passes(stage="ttgir"))
        second = b.captures("matmul_kernel")[1]
        # The status line names the statement of the cursor's line, as the core groups it
        # (the kernel's signature spans several lines).
        first_unit, dot_unit = cap.statement(first), cap.statement(py_line)
        first_label = f"python lines {first_unit.label()}" if first_unit.spans else f"python line {first}"
        dot_label = f"python lines {dot_unit.label()}" if dot_unit.spans else f"python line {py_line}"
        dot_where = "this statement" if dot_unit.spans else "this line"
    env = {"TERM": "xterm-256color", "XDG_CONFIG_HOME": str(tmp_path),  # no user keymap
           "COLUMNS": "120", "LINES": "40"}
    tmux = Tmux(f"{sys.executable} -m irscope open {BUNDLE}", env)
    try:
        tmux.wait_for("6 of 6 captures", "matmul_kernel", "bias_gelu_rowsum_kernel")
        # open the first matmul capture (row 2)
        tmux.keys("Down", "Enter")
        tmux.wait_for("TTIR", "TTGIR", "LLIR", "PTX", "SASS", first_label)
        # move to the tl.dot line by searching the Python pane
        tmux.keys("/")
        tmux.wait_for("search (enter: find")
        tmux.type("tl.dot(")
        tmux.keys("Enter")
        tmux.wait_for(dot_label, "cursor on tt.dot")
        # TTGIR: the tab title counts the line's ops
        tmux.keys("t")
        tmux.wait_for(f"TTGIR {ttgir_ops}", f"TTGIR: {ttgir_ops} op(s) on {dot_where}")
        # the gutter: number, mark, then the why column (its width: the kinds of marks the kernel has)
        tmux.wait_for_match(rf"{py_line} .{{0,8}}        accumulator = tl\.dot\(a, b")
        # the pass stepper on TTGIR, three steps
        tmux.keys("p")
        tmux.wait_for("passes · ttgir", f"ttgir 1/{n_ttgir_passes}")
        for step in (2, 3, 4):
            tmux.keys("Right")
            tmux.wait_for(f"ttgir {step}/{n_ttgir_passes}")
        # back to the browser, mark two captures, diff them
        tmux.keys("Escape")
        tmux.wait_for("Jump next stage")
        # escape closes one thing at a time: the search's result bar, its hits, the view
        tmux.keys("Escape")
        tmux.wait_for("search closed")
        tmux.keys("Escape")
        tmux.wait_for("search hits cleared")
        tmux.keys("Escape")
        tmux.wait_for("6 of 6 captures")
        tmux.keys("Space", "Space")
        tmux.wait_for(f"marked: #{cap.id}, #{second.id}")
        tmux.keys("d")
        tmux.wait_for("diff", "stage(s) compared", "A ", "B ", "matmul_kernel")
        tmux.keys("q")
        deadline = time.monotonic() + TIMEOUT
        while tmux.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not tmux.alive(), "q did not quit the app"
    finally:
        tmux.kill()
