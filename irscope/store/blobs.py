"""Content-addressed, compressed text storage with line-level deltas.

Consecutive pass snapshots are mostly identical, and when they differ they
differ in a few lines. So a blob is stored either whole (zlib) or as a line
delta against an earlier blob (copy ranges + inserted lines, then zlib),
whichever is smaller. Identical texts share one blob (key = sha256 of the
bytes). Delta chains are capped so reading stays fast.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import sqlite3
import zlib
from collections import OrderedDict

MAX_CHAIN = 24  # deltas applied at most to rebuild one text
ZLIB_LEVEL = 6


def text_hash(data: bytes) -> str:
    """The content address of a blob."""
    return hashlib.sha256(data).hexdigest()


def make_delta(base: list[str], new: list[str]) -> list:
    """Line delta: ``[[start, end], "inserted text", ...]`` rebuilding ``new`` from ``base``.

    Copy ranges refer to ``base`` lines; strings are inserted verbatim (joined lines).
    """
    ops: list = []
    sm = difflib.SequenceMatcher(None, base, new, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            ops.append([i1, i2])
        elif j2 > j1:
            ops.append("".join(new[j1:j2]))
    return ops


def apply_delta(base: list[str], ops: list) -> list[str]:
    """Inverse of :func:`make_delta`."""
    out: list[str] = []
    for op in ops:
        if isinstance(op, str):
            out.extend(op.splitlines(keepends=True))
        else:
            out.extend(base[op[0] : op[1]])
    return out


def _common_affix_delta(base: list[str], new: list[str]) -> list:
    """Delta from the common prefix and suffix, diffing only the middle.

    SequenceMatcher is quadratic in the worst case; trimming the unchanged head
    and tail first keeps it to the part a pass actually touched.
    """
    n = min(len(base), len(new))
    pre = 0
    while pre < n and base[pre] == new[pre]:
        pre += 1
    suf = 0
    while suf < n - pre and base[-1 - suf] == new[-1 - suf]:
        suf += 1
    ops: list = [[0, pre]] if pre else []
    mid = make_delta(base[pre : len(base) - suf], new[pre : len(new) - suf])
    for op in mid:
        ops.append(op if isinstance(op, str) else [op[0] + pre, op[1] + pre])
    if suf:
        ops.append([len(base) - suf, len(base)])
    return ops


class BlobStore:
    """Blob table access for one SQLite connection."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self._cache: OrderedDict[str, list[str]] = OrderedDict()

    def put(self, data: str | bytes, base: str | None = None) -> str:
        """Store ``data`` (once) and return its hash; ``base`` is a delta candidate."""
        raw = data.encode() if isinstance(data, str) else data
        key = text_hash(raw)
        if self.conn.execute("SELECT 1 FROM blobs WHERE hash=?", (key,)).fetchone():
            return key
        full = zlib.compress(raw, ZLIB_LEVEL)
        encoding, payload, base_used, depth = ("zlib" if isinstance(data, str) else "zlib-bin"), full, None, 0
        if isinstance(data, str) and base and base != key:
            row = self.conn.execute("SELECT depth FROM blobs WHERE hash=? AND encoding IN ('zlib','delta')", (base,)).fetchone()
            if row is not None and row[0] < MAX_CHAIN:
                base_lines = self._lines(base)
                new_lines = data.splitlines(keepends=True)
                ops = _common_affix_delta(base_lines, new_lines)
                delta = zlib.compress(json.dumps(ops, separators=(",", ":")).encode(), ZLIB_LEVEL)
                if len(delta) < len(full):
                    encoding, payload, base_used, depth = "delta", delta, base, row[0] + 1
                self._remember(key, new_lines)
        self.conn.execute(
            "INSERT INTO blobs(hash, encoding, base, depth, raw_size, data) VALUES (?,?,?,?,?,?)",
            (key, encoding, base_used, depth, len(raw), payload),
        )
        return key

    def get(self, key: str) -> str | bytes:
        """The stored text (str) or binary (bytes) for ``key``."""
        row = self.conn.execute("SELECT encoding FROM blobs WHERE hash=?", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        if row[0] == "zlib-bin":
            data = self.conn.execute("SELECT data FROM blobs WHERE hash=?", (key,)).fetchone()[0]
            return zlib.decompress(data)
        return "".join(self._lines(key))

    def _lines(self, key: str) -> list[str]:
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        encoding, base, data = self.conn.execute("SELECT encoding, base, data FROM blobs WHERE hash=?", (key,)).fetchone()
        if encoding == "delta":
            lines = apply_delta(self._lines(base), json.loads(zlib.decompress(data)))
        else:
            lines = zlib.decompress(data).decode("utf-8", "replace").splitlines(keepends=True)
        self._remember(key, lines)
        return lines

    def _remember(self, key: str, lines: list[str]) -> None:
        self._cache[key] = lines
        self._cache.move_to_end(key)
        while len(self._cache) > 8:
            self._cache.popitem(last=False)
