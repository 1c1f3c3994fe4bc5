"""Focus: keep the ops of some Python lines (``--lines 30-42``), or the ops within
``--radius`` def-use steps of every op of one name (``--op tt.dot``)."""

from __future__ import annotations

import difflib
from collections import Counter

from irscope.errors import IrscopeError

from .structure import Structure


def parse_lines(text: str) -> tuple[int, int]:
    """``30-42`` or ``30`` -> (first, last). IrscopeError (one line) for anything else."""
    raw = text.strip()
    parts = raw.split("-", 1) if "-" in raw[1:] else [raw]
    try:
        nums = [int(p) for p in parts]
    except ValueError:
        raise IrscopeError(f"--lines {text!r}: give a line or a range of Python lines, like 30-42") from None
    first, last = nums[0], nums[-1]
    if first < 1 or last < first:
        raise IrscopeError(f"--lines {text!r}: give lines from 1 up, first <= last (like 30-42)")
    return first, last


def by_lines(s: Structure, keys: list[str], lines: tuple[int, int]) -> list[str]:
    """The keys whose Python line is within ``lines``."""
    lo, hi = lines
    got = [k for k in keys if (ln := s.things[k].python_line) is not None and lo <= ln <= hi]
    if not got:
        have = sorted({t.python_line for t in s.things.values() if t.python_line})
        span = f"lines {have[0]}..{have[-1]}" if have else "no Python lines at all"
        raise IrscopeError(f"no op comes from Python lines {lo}-{hi} (the ops have {span})")
    return got


def by_op(s: Structure, keys: list[str], name: str, radius: int) -> tuple[list[str], int]:
    """The keys within ``radius`` def-use steps (either direction) of an op called
    ``name``; also how many ops have that name."""
    if radius < 0:
        raise IrscopeError(f"--radius {radius}: give 0 or more")
    chosen = set(keys)
    seeds = [k for k in keys if s.things[k].kind == "op" and s.things[k].name == name]
    if not seeds:
        names = Counter(s.things[k].name for k in keys if s.things[k].kind == "op")
        close = difflib.get_close_matches(name, list(names), n=3, cutoff=0.5)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise IrscopeError(f"no op named {name!r} here{hint}")
    neighbours: dict[str, list[str]] = {}
    for a, b, kind, _ in s.edges:
        if kind == "def-use" and a in chosen and b in chosen:
            neighbours.setdefault(a, []).append(b)
            neighbours.setdefault(b, []).append(a)
    seen = set(seeds)
    frontier = list(seeds)
    for _ in range(radius):
        nxt = []
        for k in frontier:
            for n in neighbours.get(k, ()):
                if n not in seen:
                    seen.add(n)
                    nxt.append(n)
        frontier = nxt
    return [k for k in keys if k in seen], len(seeds)
