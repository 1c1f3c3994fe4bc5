"""What every public parse entry point wraps itself in: the guards of
:mod:`irscope.text_guard` (GC paused, never raise) with, as the fallback, a module
whose every line is an ``<unknown>`` op."""

from __future__ import annotations

import functools
from typing import Callable, TypeVar

from irscope import text_guard
from irscope.text_guard import paused_gc

from .model import Module, unknown_op

F = TypeVar("F", bound=Callable)

def opaque_module(text: str, stage: str) -> Module:
    """A module where every non-blank line is an ``<unknown>`` op."""
    mod = Module(stage)
    for i, line in enumerate(text.split("\n"), 1):
        if line.strip():
            op = unknown_op(i, line)
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
                if text_guard.STRICT:
                    raise
                return opaque_module(text if isinstance(text, str) else "", stage)

        return wrapper  # type: ignore[return-value]

    return decorate
