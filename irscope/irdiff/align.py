"""Align two sequences of keys: the pairs of equal keys that keep both orders.

Patience alignment: keys that occur once on each side anchor the alignment (the
longest increasing run of them), and the gaps between anchors are aligned the
same way, recursively. Equal keys paired by occurrence, keeping the longest
increasing run of those pairs, is the other candidate at every level (and the
only one in a gap with no unique key); the one that pairs more wins. Every level costs
O(n log n) and the depth is capped, so the whole is never quadratic; difflib and
Myers' algorithm are, on the long runs of identical instructions LLVM IR and
SASS are made of.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter, defaultdict
from typing import Hashable, Sequence

MAX_DEPTH = 48
"""Anchor recursion depth; deeper gaps fall back to occurrence pairing."""


def longest_increasing(pairs: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence of ``pairs`` (sorted by their first item) whose second
    items increase strictly (patience sorting, O(n log n))."""
    tails: list[int] = []  # tails[k]: the smallest second item ending a run of length k+1
    tail_at: list[int] = []  # index into pairs of that tail
    back: list[int] = [-1] * len(pairs)
    for i, (_, j) in enumerate(pairs):
        k = bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            tail_at.append(i)
        else:
            tails[k] = j
            tail_at[k] = i
        back[i] = tail_at[k - 1] if k else -1
    out = []
    i = tail_at[-1] if tail_at else -1
    while i >= 0:
        out.append(pairs[i])
        i = back[i]
    return out[::-1]


def align(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[tuple[int, int]]:
    """Index pairs ``(i, j)`` with ``a[i] == b[j]``, increasing in both."""
    out: list[tuple[int, int]] = []
    _align(a, b, 0, len(a), 0, len(b), out, 0)
    return out


def _align(a, b, alo: int, ahi: int, blo: int, bhi: int, out: list, depth: int) -> None:
    n = _common_run(a, b, alo, blo, min(ahi - alo, bhi - blo), 1)  # common head
    out.extend(zip(range(alo, alo + n), range(blo, blo + n)))
    alo += n
    blo += n
    n = _common_run(a, b, ahi - 1, bhi - 1, min(ahi - alo, bhi - blo), -1)  # common tail
    tail = list(zip(range(ahi - 1, ahi - 1 - n, -1), range(bhi - 1, bhi - 1 - n, -1)))
    ahi -= n
    bhi -= n
    if alo < ahi and blo < bhi:
        anchors = _unique_anchors(a, b, alo, ahi, blo, bhi) if depth < MAX_DEPTH else []
        by_occurrence = _by_occurrence(a, b, alo, ahi, blo, bhi)
        if anchors:
            # A unique key that moved far (a pass hoisted to the front) would anchor the
            # rest out of order: keep whichever of the two alignments pairs more.
            sub: list = []
            pa, pb = alo, blo
            for i, j in anchors:
                _align(a, b, pa, i, pb, j, sub, depth + 1)
                sub.append((i, j))
                pa, pb = i + 1, j + 1
            _align(a, b, pa, ahi, pb, bhi, sub, depth + 1)
            out.extend(sub if len(sub) >= len(by_occurrence) else by_occurrence)
        else:
            out.extend(by_occurrence)
    out.extend(reversed(tail))


def _common_run(a, b, i: int, j: int, limit: int, step: int) -> int:
    """How many items ``a[i] == b[j]``, ``a[i + step] == b[j + step]``... hold in a
    row (at most ``limit``). Lists compare a chunk at a time (the slice comparison
    runs in C): most passes change a few ops of thousands."""
    if not (isinstance(a, list) and isinstance(b, list)):
        n = 0
        while n < limit and a[i + n * step] == b[j + n * step]:
            n += 1
        return n
    n, chunk = 0, 8
    while n < limit:
        k = min(chunk, limit - n)
        if step > 0:
            same = a[i + n:i + n + k] == b[j + n:j + n + k]
        else:
            same = a[i - n - k + 1:i - n + 1] == b[j - n - k + 1:j - n + 1]
        if not same:
            if k == 1:
                return n
            chunk = 1 if k <= 8 else k // 8  # narrow down on the first difference
            continue
        n += k
        chunk *= 2
    return n


def _unique_anchors(a, b, alo, ahi, blo, bhi) -> list[tuple[int, int]]:
    ca = Counter(a[alo:ahi])
    cb = Counter(b[blo:bhi])
    where_b = {b[j]: j for j in range(blo, bhi) if cb[b[j]] == 1}
    pairs = [(i, where_b[a[i]]) for i in range(alo, ahi) if ca[a[i]] == 1 and a[i] in where_b]
    return longest_increasing(pairs)


def _by_occurrence(a, b, alo, ahi, blo, bhi) -> list[tuple[int, int]]:
    """The k-th occurrence of a key on one side with its k-th on the other, then the
    longest order-keeping run of those pairs."""
    queues: dict = defaultdict(list)
    for j in range(bhi - 1, blo - 1, -1):
        queues[b[j]].append(j)
    pairs = []
    for i in range(alo, ahi):
        q = queues.get(a[i])
        if q:
            pairs.append((i, q.pop()))
    return longest_increasing(pairs)
