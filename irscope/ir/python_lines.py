"""The one rule for "the ops of Python line N", shared by ``show``, ``links``, the
API and every view.

An op belongs to the line of its *innermost user frame*: the innermost frame of
its location chain outside Triton's library (``tl.sum`` is inlined from
``triton/language/standard.py``; the user's call line is what counts). Each op so
belongs to at most one line, so per-line counts add up and highlights never
overlap. With ``call_sites``, an op also counts for every outer user frame: the
line that *called* a user ``@triton.jit`` helper then holds the helper's ops too.

Views ask for a *statement*, not a bare line: a statement spanning several lines owns
the ops of all its lines (:mod:`irscope.ir.statements` says which lines those are), so
:func:`line_match` takes the statement's lines, and the core
(:meth:`irscope.core.Capture.ops_at_line`) applies both rules.
"""

from __future__ import annotations

from collections.abc import Collection

from .model import Location

PYTHON_LINE = "python-line"
"""The op's innermost user frame is the line."""
CALL_SITE = "call-site"
"""An outer user frame is the line: the op was inlined from a helper called there."""


def same_file(frame_file: str, kernel_file: str | None) -> bool:
    """Whether a debug-info path names the kernel's file: compilers print it absolute,
    relative or (MIR) as a base name, so path suffixes are compared."""
    if not kernel_file:
        return True
    a = frame_file.replace("\\", "/")
    b = kernel_file.replace("\\", "/")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def line_match(location: Location, line: int | Collection[int], file: str | None,
               call_sites: bool = False) -> str | None:
    """How ``location`` belongs to ``line`` of ``file`` (one line, or the lines of a
    statement): :data:`PYTHON_LINE`, :data:`CALL_SITE` (only with ``call_sites``), or None."""
    user = location.user_frame()
    if user is None:
        return None
    lines = (line,) if isinstance(line, int) else line
    if user.line in lines and same_file(user.file, file):
        return PYTHON_LINE
    if call_sites:
        seen = False
        for fr in location.frames:
            if fr is user:
                seen = True
                continue
            if seen and fr.line in lines and not fr.is_library() and same_file(fr.file, file):
                return CALL_SITE
    return None


def python_line(location: Location, file: str | None = None) -> int | None:
    """The line an op belongs to by the rule above (its innermost user frame), or
    None when it has none (or the frame is in another file than ``file``)."""
    user = location.user_frame()
    if user is None or not user.line or not same_file(user.file, file):
        return None
    return user.line
