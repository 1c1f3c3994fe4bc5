"""Guards for code that reads untrusted text (parsers, dump splitters).

Shared by the capture and ir layers, so it sits below both and imports nothing
of irscope.

- The cyclic garbage collector is paused during a parse: a parse allocates
  hundreds of thousands of small objects that all stay alive, and each collection
  the allocator triggers meanwhile walks them again for nothing (about 30% of the
  parse time on a 74 MB pass dump). Reference counting still frees everything.
- Input text must never make a reader raise. The readers are written not to, and
  property tests hunt for cases; should one slip through anyway, the caller gets a
  degraded but well-formed result instead of a traceback.
"""

from __future__ import annotations

import functools
import gc
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)

STRICT = False
"""Tests set this to let reader bugs raise instead of degrading (see tests/test_ir_props.py)."""


def paused_gc(fn: F) -> F:
    """Decorate ``fn`` so the cyclic collector is off while it runs (re-entrant)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not gc.isenabled():
            return fn(*args, **kwargs)
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.enable()

    return wrapper  # type: ignore[return-value]


def never_raise(fallback: Callable) -> Callable[[F], F]:
    """Decorate ``fn(text, ...)`` so an exception returns ``fallback(text)`` instead
    (GC paused too)."""

    def decorate(fn: F) -> F:
        inner = paused_gc(fn)

        @functools.wraps(fn)
        def wrapper(text, *args, **kwargs):
            try:
                return inner(text, *args, **kwargs)
            except Exception:  # a reader bug must not reach the user as a traceback
                if STRICT:
                    raise
                return fallback(text)

        return wrapper  # type: ignore[return-value]

    return decorate
