"""What every public parse entry point wraps itself in: :func:`irscope.text_guard.never_raise`
(GC paused, never raise outside the strict mode) with, as the fallback, a module
whose every line is an ``<unknown>`` op."""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from irscope.text_guard import never_raise, paused_gc

from .model import Module, unknown_op

__all__ = ["opaque_module", "parser", "paused_gc"]

F = TypeVar("F", bound=Callable[..., Any])


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
    """Decorate a ``parse_x(text, stage=..., ...)`` function with the one guard:
    GC paused, and any exception turned into :func:`opaque_module` (the contract:
    never raise on text), except in the strict mode."""

    def fallback(text: object, stage: str = default_stage, *args: Any, **kwargs: Any) -> Module:
        return opaque_module(text if isinstance(text, str) else "", stage)

    return never_raise(fallback)
