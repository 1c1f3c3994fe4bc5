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

    def put_many(self, items: list[str | bytes], run_id: int | None = None) -> list[int]:
        """Store every item not stored yet; return their blob ids, in order.

        Must run inside the caller's transaction (the bundle's), so a capture's
        texts and the rows that use them appear together or not at all.
        """
        keys: list[bytes] = []
        pending: dict[bytes, tuple[bytes, bool]] = {}
        for item in items:
            raw = item.encode() if isinstance(item, str) else item
            key = text_hash(raw)
            keys.append(key)
            if key not in pending and not self.conn.execute("SELECT 1 FROM blobs WHERE hash=?", (key,)).fetchone():
                pending[key] = (raw, isinstance(item, bytes))
        pack: list[tuple[bytes, bytes, bool]] = []
        size = 0
        for key, (raw, binary) in pending.items():
            if pack and size + len(raw) > PACK_LIMIT:
                self._write_pack(pack, run_id)
                pack, size = [], 0
            pack.append((key, raw, binary))
            size += len(raw)
        if pack:
            self._write_pack(pack, run_id)
        ids = {}
        for key in dict.fromkeys(keys):
            ids[key] = self.conn.execute("SELECT id FROM blobs WHERE hash=?", (key,)).fetchone()[0]
        return [ids[k] for k in keys]

    def put(self, item: str | bytes) -> int:
        """Store one item; see :meth:`put_many`."""
        return self.put_many([item])[0]

    def _compress_pack(self, raws: list[bytes], run_id: int | None) -> tuple[int, list[int]]:
        """Write one pack; returns its id and each item's offset in it."""
        data = b"".join(raws)
        cur = self.conn.execute(
            "INSERT INTO packs(codec, raw_size, data, run_id) VALUES ('lzma', ?, ?, ?)",
            (len(data), lzma.compress(data, filters=LZMA_FILTERS), run_id),
        )
        offsets, offset = [], 0
        for raw in raws:
            offsets.append(offset)
            offset += len(raw)
        return cur.lastrowid, offsets

    def _write_pack(self, pack: list[tuple[bytes, bytes, bool]], run_id: int | None) -> None:
        pack_id, offsets = self._compress_pack([raw for _, raw, _ in pack], run_id)
        self.conn.executemany(
            "INSERT INTO blobs(hash, pack, offset, size, binary) VALUES (?,?,?,?,?)",
            [(key, pack_id, off, len(raw), int(binary)) for (key, raw, binary), off in zip(pack, offsets)],
        )

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
