"""Make the user guide's screenshots of ``irscope open`` with Textual's own
``App.save_screenshot`` (SVG), driven by Pilot with the keys a user presses:

- the kernel view, op details and split view (``tui-kernel``, ``tui-details``,
  ``tui-split``) on the checked-in sample bundle, tests/data/samples_sm90.irscope;
- the walk-through's browser, failure, helpers, diff and pass stepper (``tui-browser``,
  ``tui-look-*``) on tests/data/learner_sm90.irscope at 120x40.

    .venv/bin/python docs/images/make_tui_screenshots.py
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from textual.widgets import Input, Static  # noqa: E402

from irscope.tui.app import make_app  # noqa: E402
from irscope.tui.screens.browser import BrowserScreen  # noqa: E402
from irscope.tui.screens.diff import DiffScreen  # noqa: E402
from irscope.tui.screens.kernel import KernelScreen  # noqa: E402
from irscope.tui.screens.passes import PassStepperScreen  # noqa: E402
from irscope.tui.widgets.ir_view import IRView  # noqa: E402

DATA = ROOT / "tests" / "data"
BUNDLE = DATA / "samples_sm90.irscope"
LEARNER = "learner_sm90.irscope"
"""Opened from tests/data, so the screens name the bundle as a user who opened it
there reads it (``irscope cat learner_sm90.irscope ...``), on any checkout."""


async def settle(pilot) -> None:
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    for inp in pilot.app.screen.query(Input):  # a blinking cursor would be caught half-drawn
        inp.cursor_blink = False


async def shoot() -> None:
    app = make_app(BUNDLE, keymap={})
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("down", "enter")
        await settle(pilot)
        screen = app.screen
        await pilot.press("t")
        await settle(pilot)
        src = screen.query_one("#source", IRView)
        src.goto_line(next(i for i in range(src.line_count) if "tl.dot(" in src.line_text(i)))
        await settle(pilot)
        app.save_screenshot("tui-kernel.svg", path=str(HERE))
        stage = screen.query_one("#stage", IRView)
        stage.focus()
        stage.goto_line(min(stage.marks))
        await pilot.press("enter")
        await settle(pilot)
        app.save_screenshot("tui-details.svg", path=str(HERE))
        await pilot.press("escape", "v")
        await settle(pilot)
        app.save_screenshot("tui-split.svg", path=str(HERE))


def _row(view: IRView, text: str) -> int:
    return next(i for i in range(view.line_count) if text in view.line_text(i))


def shot(app, name: str, screen: type, kernel: str | None = None) -> None:
    """Save ``name``, after checking the keys led where the guide says they do (a
    changed binding fails here instead of picturing the wrong screen)."""
    on = app.screen
    if not isinstance(on, screen) or (kernel is not None and on.capture.kernel != kernel):
        raise SystemExit(f"{name}: expected {screen.__name__} {kernel or ''}, found {type(on).__name__}")
    app.save_screenshot(name, path=str(HERE))


async def shoot_look() -> None:
    """The user guide's walk-through, in the order a learner takes it."""
    app = make_app(LEARNER, keymap={})
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        # The browser, the cursor on the kernel that failed in the frontend.
        await pilot.press("down", "down", "down", "down")
        await settle(pilot)
        shot(app, "tui-browser.svg", BrowserScreen)
        # Its error panel; e puts the Python cursor on the line the error names.
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        shot(app, "tui-look-failure.svg", KernelScreen, "frontend_kernel")
        # rmsnorm_kernel: its helpers' sections; on the call line, c charges their ops to it.
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("up", "up", "enter")
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        src = app.screen.query_one("#source", IRView)
        src.goto_line(_row(src, "_rsqrt_eps(_mean_square("))
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        shot(app, "tui-look-helpers.svg", KernelScreen, "rmsnorm_kernel")
        # The two _attn_fwd captures marked and diffed, n to the next change.
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("home", "space", "space", "d")
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        shot(app, "tui-look-diff.svg", DiffScreen)
        # The pass stepper of the causal _attn_fwd: s to TTGIR, right to TritonGPUCoalesce.
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("home", "down", "enter")
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        for _ in range(10):
            if "TritonGPUCoalesce " in str(app.screen.query_one("#pass-title", Static).render()):
                break
            await pilot.press("right")
            await settle(pilot)
        else:
            raise SystemExit("tui-look-passes.svg: TritonGPUCoalesce not found within 10 passes")
        await pilot.press("c")  # the snapshot scrolls to the pass's first change
        await settle(pilot)
        shot(app, "tui-look-passes.svg", PassStepperScreen, "_attn_fwd")


if __name__ == "__main__":
    asyncio.run(shoot())
    os.chdir(DATA)
    asyncio.run(shoot_look())
