"""The one guard for code that reads untrusted text (parsers, dump splitters,
layout decoders, location resolvers).

Shared by the compiler and ir layers, so it sits below both and imports nothing
of irscope.

- The cyclic garbage collector is paused during a parse: a parse allocates
  hundreds of thousands of small objects that all stay alive, and each collection
  the allocator triggers meanwhile walks them again for nothing (about 30% of the
  parse time on a 74 MB pass dump). Reference counting still frees everything.
- Input text must never make a reader raise. The readers are written not to, and
  property tests hunt for cases; should one slip through anyway, the caller gets a
  degraded but well-formed result instead of a traceback. Under :data:`STRICT`
  (the tests' mode) the exception propagates instead, so a reader bug is seen
  rather than silently turned into ``<unknown>`` lines.

:func:`never_raise` is the only place in the readers that catches every
exception; tests/test_error_contract.py holds the rest of ``irscope/`` to that.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

STRICT = False
"""True lets reader bugs raise instead of degrading (tests set it, see :func:`strict`)."""


@contextmanager
def strict() -> Iterator[None]:
    """Within the block, :func:`never_raise` re-raises instead of degrading."""
    global STRICT
    saved, STRICT = STRICT, True
    try:
        yield
    finally:
        STRICT = saved


GUARDED: list[tuple[Callable[..., Any], Callable[..., Any]]] = []
"""Every ``(reader, fallback)`` pair :func:`never_raise` has wrapped (the tests check
that each fallback takes its reader's arguments)."""


def paused_gc(fn: F) -> F:
    """Decorate ``fn`` so the cyclic collector is off while it runs (re-entrant)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not gc.isenabled():
            return fn(*args, **kwargs)
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.enable()

    return wrapper  # type: ignore[return-value]  # wraps keeps fn's signature


def never_raise(fallback: Callable[..., Any], *, pause_gc: bool = True) -> Callable[[F], F]:
    """Decorate a reader ``fn`` so that an exception it raises returns
    ``fallback(*args, **kwargs)`` (called with the same arguments) instead, except
    under :data:`STRICT`, where it propagates.

    ``pause_gc`` also pauses the cyclic collector for the call (:func:`paused_gc`):
    right for a whole parse, left off for the per-line helpers a parse calls.
    """

    def decorate(fn: F) -> F:
        GUARDED.append((fn, fallback))
        inner = paused_gc(fn) if pause_gc else fn

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return inner(*args, **kwargs)
            except Exception:  # the guard itself: a reader bug must not reach the user as a traceback
                if STRICT:
                    raise
                return fallback(*args, **kwargs)

        return wrapper  # type: ignore[return-value]  # wraps keeps fn's signature

    return decorate
