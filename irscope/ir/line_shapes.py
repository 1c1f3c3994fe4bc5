"""Classify a line once per *shape*: lines that differ only in value names share work.

Most lines of a pass snapshot are new only because SSA numbers shifted (``%12``
became ``%13``) or a location alias was renumbered: the flash-attention sample's
78,852 distinct MLIR snapshot lines have 2,498 distinct shapes once names are
abstracted. A :class:`Templater` replaces the name part of each token by its index
in the line (``%x_ptr`` -> ``%0``, ``#loc12`` -> ``#loc1``; a name used twice keeps
one index), classifies that template
once, and fills the names back into the classified tuple.

This is exact, not a heuristic: every token the pattern matches is replaced, so in
a template any sigil followed by digits *is* a placeholder, and filling is the
inverse of templating (``tests/test_ir_line_shapes.py`` checks
``fill(classify(template)) == classify(line)`` on every fixture line and on
garbled ones).
"""

from __future__ import annotations

import re
from typing import Callable

from irscope.text_guard import never_raise

_MAX_TOKENS = 2048
_DIGITS = [str(k) for k in range(_MAX_TOKENS)]


class Templater:
    """Template memo for one line classifier.

    ``tokens`` is a regex with exactly two groups, the sigil and the name
    (``(%|\\^)([\\w$.-]+)``); ``sigils`` lists every sigil the first group can match;
    ``finish(shape, template)`` completes a classified template once; lines that
    start with ``unique`` (definitions such as ``#loc12 = ...``, each unlike any
    other) are classified directly by :meth:`classify_new`.
    """

    __slots__ = ("_split", "_fill_re", "_part_re", "_classify", "_finish", "_unique")

    def __init__(self, tokens: str, sigils: tuple[str, ...], classify: Callable[[str], tuple],
                 finish: Callable[[tuple, str], tuple] = lambda shape, template: shape,
                 unique: str = ""):
        self._split = re.compile(tokens).split
        alt = "|".join(re.escape(s) for s in sorted(sigils, key=len, reverse=True))
        # A placeholder never runs into name characters: the token took all of them
        # (but a '-' of an arrow '->', which no name takes).
        end = r"(?![\w$.]|-(?!>))"
        self._fill_re = re.compile(f"(?:{alt})(\\d+){end}")
        self._part_re = re.compile(f"({alt})(\\d+){end}(.*)", re.S)  # one placeholder + a tail
        self._classify = classify
        # Completes a classified template with what is the same for all its lines
        # (the op's form), computed once per template instead of once per line.
        self._finish = finish
        self._unique = unique

    def _classify_directly(self, line: str, memo: dict) -> tuple:
        """The line classified without a template."""
        return self._classify(line)

    @never_raise(_classify_directly, pause_gc=False)  # a template must never cost a line its parse
    def classify_new(self, line: str, memo: dict) -> tuple:
        """Classify a line not seen before: through its template, but directly when it
        starts with ``unique`` (nothing to share), or, outside the strict mode, when
        templating fails (a bug: the strict mode raises it)."""
        if self._unique and line.startswith(self._unique):
            return self._classify(line)
        return self.classify(line, memo)

    def classify(self, line: str, memo: dict) -> tuple:
        """``classify(line)``, computed once per template (``memo`` holds templates)."""
        parts = self._split(line)
        n = len(parts) // 3
        if n == 0 or n > _MAX_TOKENS:
            return self._finish(self._classify(line), line)
        names = parts[2::3]
        if len(set(names)) < n:
            # A name used twice keeps one placeholder: a classifier may compare names
            # (an MLIR op's operands leave out the values its region defines).
            index: dict[str, int] = {}
            parts[2::3] = [_DIGITS[index.setdefault(nm, len(index))] for nm in names]
            names = list(index)
        else:
            parts[2::3] = _DIGITS[:n]
        template = "".join(parts)
        hit = memo.get(template)
        if hit is None:
            shape = self._finish(self._classify(template), template)
            hit = memo[template] = (shape, self._plan(shape))
        shape, plan = hit
        if not plan:
            return shape
        out = list(shape)
        for step in plan:
            how, i = step[0], step[1]
            if how == 0:  # the field is one placeholder (+ a constant tail)
                out[i] = step[2] + names[step[3]] + step[4]
            elif how == 1:  # a tuple of such
                out[i] = tuple([s + names[k] + tail for s, k, tail in step[2]])
            else:
                out[i] = self._fill(out[i], names)
        return tuple(out)

    # -- once per template ---------------------------------------------------------

    def _plan(self, shape: tuple) -> tuple:
        """How to fill each field of ``shape`` that holds a placeholder."""
        plan = []
        for i, field in enumerate(shape):
            if not self._mentions(field):
                continue
            if type(field) is str:
                one = self._one(field)
                plan.append((0, i) + one if one else (2, i))
            elif type(field) is tuple and all(type(v) is str for v in field):
                each = [self._one(v) for v in field]
                plan.append((1, i, tuple(each)) if all(each) else (2, i))
            else:
                plan.append((2, i))
        return tuple(plan)

    def _one(self, value: str):
        """(sigil, index, tail) when ``value`` is one placeholder and a constant tail."""
        m = self._part_re.fullmatch(value)
        if m is None or self._fill_re.search(m.group(3)):
            return None
        return (m.group(1), int(m.group(2)), m.group(3))

    def _mentions(self, value) -> bool:
        if type(value) is str:
            return self._fill_re.search(value) is not None
        if type(value) is tuple:
            return any(self._mentions(v) for v in value)
        return False

    def _fill(self, value, names: list[str]):
        if type(value) is str:
            return self._fill_re.sub(lambda m: m.group(0)[:-len(m.group(1))] + names[int(m.group(1))], value)
        if type(value) is tuple:
            return tuple(self._fill(v, names) for v in value)
        return value
