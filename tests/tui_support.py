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
