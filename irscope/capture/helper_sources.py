"""The Python source of the ``@triton.jit`` helpers a kernel calls, read when it is
captured so that a bundle shows them wherever it is opened.

Triton's source IR (the ``source`` stage, before inlining) holds one ``tt.func`` per
function the kernel calls, located at its ``def``; each one outside Triton's library
(:func:`irscope.core.user_functions.is_library`) other than the kernel is read from its
file, from its ``def`` to its last line (the span Python's :mod:`ast` gives). A file that
cannot be read or parsed gives no source: the views then fall back to the file on disk.
"""

from __future__ import annotations

import ast

from irscope.compiler.records import FunctionSource
from irscope.core.user_functions import function_span, is_library, read_source_file, source_ir_defs
from irscope.ir.python_lines import same_file


def _read(path: str, cwd: str | None) -> tuple[list[str], ast.Module] | None:
    text = read_source_file(path, cwd)
    if text is None:
        return None
    try:
        return text.splitlines(), ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def helper_sources(source_ir: str | None, kernel_file: str | None, kernel_first_line: int | None,
                   cwd: str | None = None) -> list[FunctionSource]:
    """The helpers' sources, from Triton's source IR of one compile (``kernel_file`` and
    ``kernel_first_line`` name the kernel's own ``def``, which is stored apart)."""
    if not source_ir:
        return []
    files: dict[str, tuple[list[str], ast.Module] | None] = {}
    out: list[FunctionSource] = []
    seen: set[tuple[str, int]] = set()
    for _name, frame in source_ir_defs(source_ir):
        if is_library(frame) or (frame.line == kernel_first_line and same_file(frame.file, kernel_file)):
            continue
        if (frame.file, frame.line) in seen:
            continue
        seen.add((frame.file, frame.line))
        if frame.file not in files:
            files[frame.file] = _read(frame.file, cwd)
        got = files[frame.file]
        span = function_span(got[1], frame.line) if got is not None else None
        if got is None or span is None:
            continue
        name, first, last = span
        out.append(FunctionSource(name, frame.file, first, "\n".join(got[0][first - 1:last])))
    return out
