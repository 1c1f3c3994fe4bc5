"""What every public parse entry point wraps itself in.

- The cyclic garbage collector is paused: a parse allocates hundreds of thousands of
  small objects that all stay alive, and each collection the allocator triggers
  meanwhile walks them again for nothing (about 30% of the parse time on a 74 MB
  pass dump). Reference counting still frees everything; the collector resumes, in
  its previous state, on return.
- Input text must never make a parser raise. The parsers are written not to, and
  property tests hunt for cases; should one slip through anyway, the caller gets a
  degraded but well-formed result (every line an ``<unknown>`` op) instead of a
  traceback.
"""

from __future__ import annotations

import functools
import gc
from typing import Callable, TypeVar

from .model import UNKNOWN_LOCATION, Module, Op

F = TypeVar("F", bound=Callable)

STRICT = False
"""Tests set this to let parser bugs raise instead of degrading (see tests/test_ir_props.py)."""


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


def opaque_module(text: str, stage: str) -> Module:
    """A module where every non-blank line is an ``<unknown>`` op."""
    mod = Module(stage)
    for i, line in enumerate(text.split("\n"), 1):
        if line.strip():
            op = Op("<unknown>", "", (), (), "", "", UNKNOWN_LOCATION, i, line, (), None, "", i)
            mod.globals.append(op)
            mod.all_ops.append(op)
            mod.unknown.append((i, line))
    mod.total_lines = len(mod.unknown)
    return mod


def parser(default_stage: str) -> Callable[[F], F]:
    """Decorate a ``parse_x(text, stage=..., ...)`` function: GC paused, and any
    exception turned into :func:`opaque_module` (the contract: never raise on text)."""

    def decorate(fn: F) -> F:
        inner = paused_gc(fn)

        @functools.wraps(fn)
        def wrapper(text: str, stage: str = default_stage, *args, **kwargs):
            try:
                return inner(text, stage, *args, **kwargs)
            except Exception:  # a parser bug must not reach the user as a traceback
                if STRICT:
                    raise
                return opaque_module(text if isinstance(text, str) else "", stage)

        return wrapper  # type: ignore[return-value]

    return decorate


def never_raise(fallback: Callable) -> Callable[[F], F]:
    """Decorate ``fn(text, ...)`` so an exception returns ``fallback(text)`` instead
    (GC paused too)."""

    def decorate(fn: F) -> F:
        inner = paused_gc(fn)

        @functools.wraps(fn)
        def wrapper(text, *args, **kwargs):
            try:
                return inner(text, *args, **kwargs)
            except Exception:  # a splitter bug must not reach the user as a traceback
                if STRICT:
                    raise
                return fallback(text)

        return wrapper  # type: ignore[return-value]

    return decorate
