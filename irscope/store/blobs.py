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

import lzma
import sqlite3
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from irscope.errors import IrscopeError

PACK_LIMIT = 16 << 20  # raw bytes per pack: bounds the cost of reading one text
# LZMA2 at preset 2 with an 8 MiB window: reaches back over several whole
# snapshots; measured ~2x faster than preset 6 for 10% more bytes.
LZMA_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 2, "dict_size": 8 << 20}]
PACKS_CACHED = 2


def text_hash(data: bytes) -> bytes:
    """The content address of a blob (sha256 digest)."""
    import hashlib  # noqa: PLC0415 - writers only: OpenSSL's start-up is ~5 ms of a viewer's open

    return hashlib.sha256(data).digest()


class BlobStore:
    """The ``blobs`` and ``packs`` tables of one SQLite connection."""

    def __init__(self, conn: sqlite3.Connection, where: str = "bundle"):
        self.conn = conn
        self.where = where
        """Names the bundle in errors."""
        self._packs: OrderedDict[int, _PackReader] = OrderedDict()

    def prepare(self, items: Iterable[str | bytes]) -> "PreparedBlobs":
        """Hash and compress ``items`` before the transaction that stores them.

        Compression is most of the cost of storing a capture (seconds for an
        ``--llvm-passes`` one), and another process writing the same bundle waits
        while a transaction is open: so it happens here, outside it. Texts the
        bundle already holds are left out; one that another writer stores in the
        meantime is skipped by :meth:`put_prepared`.

        Streams: ``items`` may be an iterator, each item is encoded, hashed and fed
        to its pack's compressor, then let go, so only one item's bytes and one
        compressor are held at a time (an ``--llvm-passes`` capture is hundreds of
        MB of text). The packs are the same bytes as compressing each pack's joined
        texts at once: same grouping, and LZMA's output does not depend on how its
        input is fed.
        """
        keys: list[bytes] = []
        sizes: list[int] = []
        seen: set[bytes] = set()
        packs: list[_Pack] = []
        pack: _PackWriter | None = None
        for item in items:
            raw = item.encode() if isinstance(item, str) else item
            key = text_hash(raw)
            keys.append(key)
            sizes.append(len(raw))
            if key in seen or self.conn.execute("SELECT 1 FROM blobs WHERE hash=?", (key,)).fetchone():
                continue
            seen.add(key)
            if pack is not None and pack.size + len(raw) > PACK_LIMIT:
                packs.append(pack.finish())
                pack = None
            if pack is None:
                pack = _PackWriter()
            pack.add(key, raw, isinstance(item, bytes))
            del raw, item
        if pack is not None:
            packs.append(pack.finish())
        return PreparedBlobs(keys, packs, sizes)

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
            raise self._damaged(f"text {blob_id} is missing")
        pack_id, offset, size, binary = row
        if not all(isinstance(v, int) for v in row) or offset < 0 or size < 0:
            raise self._damaged(f"the entry of text {blob_id} is garbled")
        raw = self._pack(pack_id).read(offset, size)
        if raw is None:
            raise self._damaged(f"text {blob_id} lies outside its pack {pack_id}")
        return raw if binary else raw.decode("utf-8", "replace")

    def _damaged(self, what: str) -> IrscopeError:
        return IrscopeError(f"{self.where}: damaged bundle: {what}")

    def _pack(self, pack_id: int) -> "_PackReader":
        reader = self._packs.get(pack_id)
        if reader is None:
            row = self.conn.execute("SELECT codec, data, raw_size FROM packs WHERE id=?", (pack_id,)).fetchone()
            if row is None:
                raise self._damaged(f"pack {pack_id} is missing")
            codec, blob, raw_size = row
            if codec != "lzma" or not isinstance(blob, bytes):
                raise self._damaged(f"pack {pack_id} has unknown codec {codec!r}" if codec != "lzma"
                                    else f"pack {pack_id} holds no bytes")
            reader = self._packs[pack_id] = _PackReader(blob, raw_size if isinstance(raw_size, int) else None,
                                                        lambda what, p=pack_id: self._damaged(f"pack {p} {what}"))
            while len(self._packs) > PACKS_CACHED:
                self._packs.popitem(last=False)
        self._packs.move_to_end(pack_id)
        return reader

    def stored_bytes(self) -> int:
        """Compressed bytes of every pack."""
        return self.conn.execute("SELECT coalesce(sum(length(data)),0) FROM packs").fetchone()[0]


class _PackReader:
    """One pack, decompressed only as far as it has been read.

    A capture's pack holds its source, stage texts and pass snapshots in the order
    they were made, up to 16 MiB raw; LZMA reads from the start, so a text near
    the start (the TTGIR a viewer opens first) costs its prefix, not the whole
    pack: ~3 ms instead of ~60 ms for the matmul sample."""

    __slots__ = ("_blob", "_raw_size", "_buf", "_dec", "_damaged")
    _STEP = 1 << 18  # bytes decompressed at least per call: few calls, little overshoot

    def __init__(self, blob: bytes, raw_size: int | None, damaged) -> None:
        self._blob: bytes | None = blob
        self._raw_size = raw_size
        self._buf = bytearray()
        self._dec = lzma.LZMADecompressor()
        self._damaged = damaged

    def read(self, offset: int, size: int) -> bytes | None:
        """Bytes ``offset .. offset + size``; None when the pack is shorter."""
        end = offset + size
        if self._raw_size is not None and end > self._raw_size:
            return None
        self._fill(end)
        return bytes(self._buf[offset:end]) if end <= len(self._buf) else None

    def _fill(self, end: int) -> None:
        buf, dec = self._buf, self._dec
        try:
            while len(buf) < end and not dec.eof:
                data = self._blob if self._blob is not None else b""
                self._blob = None  # the decompressor keeps what it has not read yet
                if not data and dec.needs_input:
                    raise EOFError("Compressed data ended before the end-of-stream marker was reached")
                buf += dec.decompress(data, max_length=max(end - len(buf), self._STEP))
        except (lzma.LZMAError, EOFError, MemoryError) as exc:
            raise self._damaged(f"does not decompress ({exc})") from None
        if dec.eof and self._raw_size is not None and len(buf) != self._raw_size:
            raise self._damaged(f"holds {len(buf)} bytes, not {self._raw_size}")


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


class _PackWriter:
    """A pack being compressed as its texts arrive (see :meth:`BlobStore.prepare`)."""

    __slots__ = ("compressor", "chunks", "entries", "size")

    def __init__(self) -> None:
        self.compressor = lzma.LZMACompressor(filters=LZMA_FILTERS)
        self.chunks: list[bytes] = []
        self.entries: list[tuple[bytes, int, int, bool]] = []
        self.size = 0

    def add(self, key: bytes, raw: bytes, binary: bool) -> None:
        self.entries.append((key, self.size, len(raw), binary))
        self.size += len(raw)
        out = self.compressor.compress(raw)
        if out:
            self.chunks.append(out)

    def finish(self) -> _Pack:
        self.chunks.append(self.compressor.flush())
        del self.compressor  # its window and match finder (tens of MB) go now
        return _Pack(b"".join(self.chunks), self.size, tuple(self.entries))


@dataclass(frozen=True, slots=True)
class PreparedBlobs:
    """Items hashed and compressed, waiting for :meth:`BlobStore.put_prepared`."""

    keys: list[bytes]
    packs: list[_Pack]
    sizes: Sequence[int] = ()
    """Encoded size of each item, in order."""
