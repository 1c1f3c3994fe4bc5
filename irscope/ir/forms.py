"""The *form* of an op: its text with everything renaming or location tracking changes
taken out. Two ops that differ only by SSA numbering, block labels or source
location have the same form; passes, diffs and provenance compare ops by it.
"""

from __future__ import annotations

import functools
import re

__all__ = ["erase_names", "loc_group_end", "normalise_op_text", "op_form"]

# The same name characters as the parsers' tokens (\w, $, ., -), so that a form is
# the same whichever way it was computed (see line_shapes, op_forms).
_VALUE_RE = re.compile(r"%[\w$.\-]+(?:#\d+)?(?::\d+)?")
_BLOCK_RE = re.compile(r"\^[\w$.\-]+")
# Location aliases are names too (#loc, #loc12): renumbered between snapshots.
_LOCREF_RE = re.compile(r"#loc[\w$.-]*")
_DBG_RE = re.compile(r",?[ \t]*!dbg[ \t]*!\d+")
# Other LLVM metadata references (!tbaa !5, !range !7): renumbered like values.
_META_RE = re.compile(r"!\d+(?![-\w.$])")


def loc_group_end(text: str, start: int) -> int:
    """The index after the ``)`` closing the ``loc(`` at ``start`` (nested parentheses
    and quoted strings respected); ``len(text)`` when it is not closed in ``text``."""
    depth, k, in_str, n = 0, start + 3, False, len(text)
    while k < n:
        c = text[k]
        if in_str:
            if c == "\\":
                k += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return k + 1
        k += 1
    return n


def _strip_locs(text: str) -> str:
    """Remove every ``loc(...)`` group (balanced parentheses; quoted strings respected)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        j = text.find("loc(", i)
        # Only a standalone keyword: not the tail of an identifier such as ``alloc(``.
        while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_.#%^$-!"):
            j = text.find("loc(", j + 1)
        if j < 0:
            out.append(text[i:])
            break
        out.append(text[i:j])
        i = loc_group_end(text, j)
    return "".join(out)


@functools.lru_cache(maxsize=1 << 16)
def normalise_op_text(text: str) -> str:
    """The op line with everything that renaming or location tracking changes removed.

    ``loc(...)`` groups are dropped; ``%name``/``%12``/``%12#0`` become ``%``, block
    labels ``^bb3`` become ``^``, location aliases ``#loc12`` become ``#loc``, LLVM
    ``!dbg !12`` attachments are dropped and other metadata numbers ``!7`` become
    ``!``; whitespace is collapsed. Two ops that differ
    only by SSA numbering or source location normalise to the same string.

    The parsers call this once per line *shape* (see ``line_shapes``) and keep the
    result as ``Op.form``; the memo serves the other callers. Each substitution runs
    only when its marker is present, since ``re.sub`` scans the whole line even to
    find nothing.
    """
    t = _strip_locs(text) if "loc(" in text else text
    if "%" in t:
        t = _VALUE_RE.sub("%", t)
    if "^" in t:
        t = _BLOCK_RE.sub("^", t)
    if "#loc" in t:
        t = _LOCREF_RE.sub("#loc", t)
    if "!" in t:
        if "!dbg" in t:
            t = _DBG_RE.sub("", t)
        t = _META_RE.sub("!", t)
    return " ".join(t.split())


def op_form(op) -> str:
    """The form of a parsed op (anything with ``.form`` and ``.text``): the one the
    parser filled in, else computed from its text."""
    return op.form or normalise_op_text(op.text)


def erase_names(text: str, erasers) -> str:
    """``text`` with every name token replaced by one constant per kind: ``erasers``
    holds ``(marker, regex.sub, constant)`` triples (``("%", ..., "%0")``); one
    regex pass per kind over the whole text, at C speed, skipped when the marker is
    absent. An op's kind, name and form depend only on where names stand, not on
    which names they are, so they can be read from the erased text."""
    for marker, sub, constant in erasers:
        if marker in text:
            text = sub(constant, text)
    return text
