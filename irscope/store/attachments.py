"""Results attached to a bundle after capture (schema 6): GPU profiles of a capture,
pass-ablation and autotune-exploration tables, replay stamps; and one written with a
capture, ``launch`` (the grid and argument shapes of the launch that compiled it).

One table, ``attachments``, holds them all: each row is a ``kind``, the capture it
belongs to (None for one about several captures), a short ``label`` and a JSON
payload compressed with zlib. The payload's shape is the kind's owner's business
(``irscope.core.profile``, ``irscope.core.experiments``); the store only keeps it.
Adding one is a single transaction: it appears whole or not at all.
"""

from __future__ import annotations

import json
import time
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3

    from .bundle import Bundle

ATTACHMENTS_TABLE = """CREATE TABLE attachments (
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, capture_id INTEGER REFERENCES captures(id),
    label TEXT NOT NULL, created TEXT NOT NULL, data BLOB NOT NULL
)"""


@dataclass(frozen=True)
class AttachmentRow:
    """One attached result: its payload is ``data`` (decoded JSON)."""

    id: int
    kind: str
    capture_id: int | None
    label: str
    created: str
    data: Any


def has_attachments(bundle: "Bundle") -> bool:
    """Whether the bundle's schema has the table (6 and later)."""
    return bundle.conn.execute("SELECT 1 FROM sqlite_master WHERE name='attachments'").fetchone() is not None


def add_attachment(bundle: "Bundle", kind: str, capture_id: int | None, label: str, data: Any) -> int:
    """Attach ``data`` (JSON-able) to a bundle opened with ``create=True``; returns its id."""
    with bundle._tx() as conn:
        return insert_attachment(conn, kind, capture_id, label, data)


def insert_attachment(conn: "sqlite3.Connection", kind: str, capture_id: int | None, label: str, data: Any) -> int:
    """Insert one attachment row inside a transaction the caller holds (the store adds
    a capture's ``launch`` record in the capture's own transaction); returns its id."""
    blob = zlib.compress(json.dumps(data, separators=(",", ":")).encode(), 6)
    created = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    cur = conn.execute("INSERT INTO attachments (kind, capture_id, label, created, data) VALUES (?,?,?,?,?)",
                       (kind, capture_id, label, created, blob))
    return int(cur.lastrowid or 0)


def remove_attachment(bundle: "Bundle", attachment_id: int) -> bool:
    """Remove one attachment (a writer's bundle); whether it existed."""
    with bundle._tx() as conn:
        return conn.execute("DELETE FROM attachments WHERE id=?", (attachment_id,)).rowcount > 0


def attachments(bundle: "Bundle", kind: str | None = None, capture_id: int | None = None) -> list[AttachmentRow]:
    """The attachments of a bundle, oldest first, filtered by kind and capture;
    none in a bundle older than schema 6."""
    if not has_attachments(bundle):
        return []
    sql = "SELECT id, kind, capture_id, label, created, data FROM attachments WHERE 1=1"
    args: list[Any] = []
    if kind is not None:
        sql += " AND kind=?"
        args.append(kind)
    if capture_id is not None:
        sql += " AND capture_id=?"
        args.append(capture_id)
    rows = bundle.conn.execute(sql + " ORDER BY id", args).fetchall()
    return [AttachmentRow(r[0], r[1], r[2], r[3], r[4], json.loads(zlib.decompress(r[5]))) for r in rows]
