"""Make the user guide's screenshots of ``irscope open`` with Textual's own
``App.save_screenshot`` (SVG), driven by Pilot on the checked-in sample bundle.

    .venv/bin/python docs/images/make_tui_screenshots.py
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from irscope.tui.app import make_app  # noqa: E402
from irscope.tui.widgets.ir_view import IRView  # noqa: E402

BUNDLE = ROOT / "tests" / "data" / "samples_sm90.irscope"


async def settle(pilot) -> None:
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


async def shoot() -> None:
    app = make_app(BUNDLE, keymap={})
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.save_screenshot("tui-browser.svg", path=str(HERE))
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
        await pilot.press("v", "p")
        await settle(pilot)
        for _ in range(3):
            await pilot.press("right")
            await settle(pilot)
        app.save_screenshot("tui-passes.svg", path=str(HERE))
        await pilot.press("escape", "escape", "space", "space", "d")
        await settle(pilot)
        await settle(pilot)
        app.save_screenshot("tui-diff.svg", path=str(HERE))


if __name__ == "__main__":
    asyncio.run(shoot())
