"""Op names and forms of a whole MLIR text without building its op tree
(:func:`op_forms_mlir`): what summaries of whole pass snapshots need. Lines are
classified by :mod:`irscope.ir.mlir`'s reader, with the text's names erased.
"""

from __future__ import annotations

import re

from .forms import erase_names, normalise_op_text
from .mlir import (_NAME, K_AMEND, K_FUNC, K_GOES_ON, K_OP, K_OPEN, K_OPENSTR, K_RESOURCE, _classify_safe,
                   _logical_lines)
from .model import ParseCache

__all__ = ["op_forms_mlir"]


# Every name token rewritten to one constant name per sigil: see op_forms_mlir.
_ERASERS = (("%", re.compile(rf"%{_NAME}").sub, "%0"), ("^", re.compile(rf"\^{_NAME}").sub, "^0"),
            ("#loc", re.compile(rf"#loc{_NAME}").sub, "#loc0"))


def op_forms_mlir(text: str, cache: ParseCache | None = None) -> list[tuple[str, str]]:
    """``(op name, form)`` of every op :func:`parse_mlir` would give, in text order,
    without building the op tree (unknown lines left out).

    What summaries of whole snapshots need (``irscope passes``). An op's kind, name
    and form do not depend on which names it uses, only on where names stand, so
    the text is read with its names erased (:func:`erase_names`): the lines of a
    snapshot whose values were renumbered become lines already seen, and each
    distinct erased line is classified once (``tests/test_ir_line_shapes.py`` checks
    the result equals the full parse's on every fixture).
    """
    memo = cache.mlir_forms if cache is not None else {}
    memo_get = memo.get
    erased = erase_names(text, _ERASERS)
    out: list[tuple[str, str]] = []
    add = out.append
    # One line at a time is exact unless a string literal or a statement's brackets
    # span lines, or a resource block hides lines: then the state machine of the
    # full parse takes over.
    for line in erased.split("\n"):
        t = memo_get(line)
        if t is None:
            t = memo[line] = _name_and_form(line)
        k = t[0]
        if k == K_OP:
            add((t[1], t[2]))
        elif k >= K_OPENSTR:
            return _op_forms_stateful(erased, memo)
    return out


def _name_and_form(raw: str) -> tuple:
    """What :func:`op_forms_mlir` keeps of a line: ``(K_OP, name, form)`` for an op,
    ``(K_RESOURCE, closed)``, ``(K_OPEN, brackets open)``, ``(K_GOES_ON, brackets
    open)``, or the kind alone."""
    t = _classify_safe(raw)
    k = t[0]
    if k == K_OP:
        return (K_OP, t[1], normalise_op_text(raw.strip()))
    if k == K_FUNC and not t[7]:  # a declaration: an op, unlike a function with a body
        return (K_OP, t[1], normalise_op_text(raw.strip()))
    return t[:2] if k == K_RESOURCE or k == K_OPEN or k == K_GOES_ON else (k,)


def _op_forms_stateful(text: str, memo: dict) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    add = out.append
    for t, _, raw, _ in _logical_lines(text, memo, _name_and_form, [0, 0, 0]):
        k = t[0]
        if k == K_OP:
            # (a statement joined from several lines has its form, the text's comments left out)
            add((t[1], t[2] if len(t) == 3 else t[11] or normalise_op_text(raw.strip())))
        elif k == K_FUNC and len(t) > 7 and not t[7]:  # a joined declaration
            add((t[1], normalise_op_text(raw.strip())))
        elif k == K_AMEND and out:  # the op above goes on in the next lines: it comes again whole
            out.pop()
    return out
