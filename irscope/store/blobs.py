"""Content-addressed text storage, compressed in packs.

Consecutive pass snapshots are nearly identical, but "nearly" often means every
SSA number shifted by one, which defeats line-level deltas. A long-window
compressor sees through that: the distinct texts of one capture are written
back to back into *packs* of up to PACK_LIMIT bytes, each compressed once with
LZMA (preset 1: fast, 1 MiB window, enough to reach the previous snapshots).
On the matmul sample this keeps ~1.3% of the bytes, against ~4.8% for
whole-snapshot dedup plus zlib (see docs/benchmarks.md).

A blob's key is the sha256 of its bytes, so identical texts, within a capture
or across captures and runs, are stored once.
"""

from __future__ import annotations

import hashlib
import lzma
import sqlite3
from collections import OrderedDict
from dataclasses import dataclass

PACK_LIMIT = 16 << 20  # raw bytes per pack: bounds the cost of reading one text
# LZMA2 at preset 2 with an 8 MiB window: reaches back over several whole
# snapshots; measured ~2x faster than preset 6 for 10% more bytes.
LZMA_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 2, "dict_size": 8 << 20}]
PACKS_CACHED = 2


def text_hash(data: bytes) -> bytes:
    """The content address of a blob (sha256 digest)."""
    return hashlib.sha256(data).digest()


class BlobStore:
    """The ``blobs`` and ``packs`` tables of one SQLite connection."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self._packs: OrderedDict[int, bytes] = OrderedDict()

    def prepare(self, items: list[str | bytes]) -> "PreparedBlobs":
        """Hash and compress ``items`` before the transaction that stores them.

        Compression is most of the cost of storing a capture (seconds for an
        ``--llvm-passes`` one), and another process writing the same bundle waits
        while a transaction is open: so it happens here, outside it. Texts the
        bundle already holds are left out; one that another writer stores in the
        meantime is skipped by :meth:`put_prepared`.
        """
        keys: list[bytes] = []
        pending: dict[bytes, tuple[bytes, bool]] = {}
        for item in items:
            raw = item.encode() if isinstance(item, str) else item
            key = text_hash(raw)
            keys.append(key)
            if key not in pending and not self.conn.execute("SELECT 1 FROM blobs WHERE hash=?", (key,)).fetchone():
                pending[key] = (raw, isinstance(item, bytes))
        packs: list[_Pack] = []
        group: list[tuple[bytes, bytes, bool]] = []
        size = 0
        for key, (raw, binary) in pending.items():
            if group and size + len(raw) > PACK_LIMIT:
                packs.append(_Pack.build(group))
                group, size = [], 0
            group.append((key, raw, binary))
            size += len(raw)
        if group:
            packs.append(_Pack.build(group))
        return PreparedBlobs(keys, packs)

    def put_prepared(self, prepared: "PreparedBlobs", run_id: int | None = None) -> list[int]:
        """Store what :meth:`prepare` made; the blob ids of its items, in order.

        Must run inside the caller's transaction (the bundle's), so a capture's
        texts and the rows that use them appear together or not at all.
        """
        for pack in prepared.packs:
            missing = [e for e in pack.entries
                       if not self.conn.execute("SELECT 1 FROM blobs WHERE hash=?", (e[0],)).fetchone()]
            if not missing:  # another writer stored all of them since prepare()
                continue
            cur = self.conn.execute("INSERT INTO packs(codec, raw_size, data, run_id) VALUES ('lzma', ?, ?, ?)",
                                    (pack.raw_size, pack.data, run_id))
            self.conn.executemany("INSERT OR IGNORE INTO blobs(hash, pack, offset, size, binary) VALUES (?,?,?,?,?)",
                                  [(key, cur.lastrowid, off, size, int(binary)) for key, off, size, binary in missing])
        ids = {key: self.conn.execute("SELECT id FROM blobs WHERE hash=?", (key,)).fetchone()[0]
               for key in dict.fromkeys(prepared.keys)}
        return [ids[k] for k in prepared.keys]

    def put_many(self, items: list[str | bytes], run_id: int | None = None) -> list[int]:
        """:meth:`prepare` and :meth:`put_prepared` in one step (inside a transaction)."""
        return self.put_prepared(self.prepare(items), run_id)

    def put(self, item: str | bytes) -> int:
        """Store one item; see :meth:`put_many`."""
        return self.put_many([item])[0]

    def get(self, blob_id: int) -> str | bytes:
        """The stored text (str) or binary (bytes) of a blob."""
        row = self.conn.execute("SELECT pack, offset, size, binary FROM blobs WHERE id=?", (blob_id,)).fetchone()
        if row is None:
            raise KeyError(blob_id)
        pack_id, offset, size, binary = row
        raw = self._pack(pack_id)[offset : offset + size]
        return raw if binary else raw.decode("utf-8", "replace")

    def _pack(self, pack_id: int) -> bytes:
        data = self._packs.get(pack_id)
        if data is None:
            codec, blob = self.conn.execute("SELECT codec, data FROM packs WHERE id=?", (pack_id,)).fetchone()
            if codec != "lzma":
                raise ValueError(f"unknown pack codec {codec!r}")
            data = lzma.decompress(blob)
            self._packs[pack_id] = data
            while len(self._packs) > PACKS_CACHED:
                self._packs.popitem(last=False)
        self._packs.move_to_end(pack_id)
        return data

    def stored_bytes(self) -> int:
        """Compressed bytes of every pack."""
        return self.conn.execute("SELECT coalesce(sum(length(data)),0) FROM packs").fetchone()[0]


@dataclass(frozen=True, slots=True)
class _Pack:
    """One compressed pack, ready to insert: its entries are (hash, offset, size, binary)."""

    data: bytes
    raw_size: int
    entries: tuple[tuple[bytes, int, int, bool], ...]

    @classmethod
    def build(cls, group: list[tuple[bytes, bytes, bool]]) -> "_Pack":
        raw = b"".join(r for _, r, _ in group)
        entries, offset = [], 0
        for key, r, binary in group:
            entries.append((key, offset, len(r), binary))
            offset += len(r)
        return cls(lzma.compress(raw, filters=LZMA_FILTERS), len(raw), tuple(entries))


@dataclass(frozen=True, slots=True)
class PreparedBlobs:
    """Items hashed and compressed, waiting for :meth:`BlobStore.put_prepared`."""

    keys: list[bytes]
    packs: list[_Pack]
