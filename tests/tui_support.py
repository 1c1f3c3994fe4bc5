"""Helpers shared by the TUI tests (no pytest-asyncio here: Pilot tests run through asyncio.run)."""

from __future__ import annotations

import asyncio
import functools


def run_async(fn):
    """Run an ``async def`` test function to completion; fixtures still resolve through
    ``functools.wraps`` (pytest reads the wrapped signature)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(fn(*args, **kwargs))
    return wrapper


async def settle(pilot) -> None:
    """Let the app finish its workers and redraw, and stop input cursors blinking, so a
    snapshot shows one steady frame."""
    from textual.widgets import Input

    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    for inp in pilot.app.screen.query(Input):
        inp.cursor_blink = False
