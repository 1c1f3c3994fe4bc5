"""The bundle's SQLite schema: its tables, its version, how a new bundle is made and
an older one upgraded in place, and how a file is recognised as a bundle (the schema is
described in docs/bundle-format.md; store/bundle.py opens, writes and reads bundles)."""

from __future__ import annotations

import sqlite3
import time

from irscope.store.attachments import ATTACHMENTS_TABLE

SCHEMA_VERSION = 6
# v2: passes.seconds, packs.run_id; v3: captures.shared_static; v4: helpers; v5: remarks,
# captures.remarks; v6: attachments (store/attachments.py) (older bundles are read as they are, and upgraded in place when a
# capture is added to them).
APPLICATION_ID = 0x69725343  # 'irSC': marks the file as an irscope bundle
# Writers hold the lock only to insert rows (texts are compressed before), so a
# long wait means a stuck writer; readers wait for a commit in flight.
BUSY_TIMEOUT_MS = 60_000

REMARKS_TABLE = """CREATE TABLE remarks (
    capture_id INTEGER NOT NULL REFERENCES captures(id), seq INTEGER NOT NULL,
    file TEXT NOT NULL, line INTEGER NOT NULL, col INTEGER NOT NULL, severity TEXT NOT NULL, text TEXT NOT NULL,
    pass_name TEXT, stage TEXT, called_from TEXT NOT NULL, notes TEXT NOT NULL,
    PRIMARY KEY (capture_id, seq)
) WITHOUT ROWID"""
"""Triton's remarks per capture (schema 5)."""

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    started TEXT NOT NULL, finished TEXT,
    complete INTEGER NOT NULL DEFAULT 0,
    mode TEXT NOT NULL, targets TEXT NOT NULL, llvm_passes INTEGER NOT NULL,
    command TEXT NOT NULL, script TEXT, cwd TEXT, host TEXT,
    python_executable TEXT, irscope_version TEXT, env TEXT NOT NULL,
    status TEXT, error TEXT
);
CREATE TABLE kernels (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL, file TEXT, first_line INTEGER, source TEXT, source_hash TEXT NOT NULL,
    UNIQUE (name, file, first_line, source_hash)
);
CREATE TABLE captures (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    kernel_id INTEGER NOT NULL REFERENCES kernels(id),
    variant TEXT NOT NULL, target TEXT NOT NULL, hash TEXT,
    triton_version TEXT, torch_version TEXT, python_version TEXT,
    host TEXT, argv TEXT, started TEXT, mode TEXT,
    signature TEXT, constexprs TEXT, attrs TEXT, options TEXT, metadata TEXT,
    compile_seconds REAL, stage_seconds TEXT,
    registers INTEGER, spill_stores INTEGER, spill_loads INTEGER,
    shared INTEGER, local INTEGER, stack INTEGER, resource_source TEXT, shared_static INTEGER,
    raw_bytes INTEGER NOT NULL,
    error TEXT, error_detail TEXT, failed_stage TEXT, failed_pass TEXT,
    notes TEXT, remarks TEXT
);
CREATE INDEX captures_by_kernel ON captures(kernel_id, target, variant);
CREATE TABLE packs (
    id INTEGER PRIMARY KEY, codec TEXT NOT NULL, raw_size INTEGER NOT NULL, data BLOB NOT NULL,
    run_id INTEGER REFERENCES runs(id)
);
CREATE TABLE blobs (
    id INTEGER PRIMARY KEY, hash BLOB NOT NULL UNIQUE, pack INTEGER NOT NULL REFERENCES packs(id),
    offset INTEGER NOT NULL, size INTEGER NOT NULL, binary INTEGER NOT NULL
);
CREATE TABLE stages (
    capture_id INTEGER NOT NULL REFERENCES captures(id),
    stage TEXT NOT NULL, blob INTEGER NOT NULL REFERENCES blobs(id), size INTEGER NOT NULL,
    PRIMARY KEY (capture_id, stage)
) WITHOUT ROWID;
CREATE TABLE helpers (
    capture_id INTEGER NOT NULL REFERENCES captures(id),
    name TEXT NOT NULL, file TEXT NOT NULL, first_line INTEGER NOT NULL, source TEXT NOT NULL
);
CREATE TABLE passes (
    capture_id INTEGER NOT NULL REFERENCES captures(id),
    seq INTEGER NOT NULL, stage TEXT NOT NULL, kind TEXT NOT NULL, "when" TEXT NOT NULL,
    name TEXT NOT NULL, argument TEXT, options TEXT, anchor TEXT, anchor_name TEXT,
    blob INTEGER NOT NULL REFERENCES blobs(id), size INTEGER NOT NULL, seconds REAL,
    PRIMARY KEY (capture_id, seq)
) WITHOUT ROWID;
""" + REMARKS_TABLE + ";\n" + ATTACHMENTS_TABLE + ";\n"


def is_bundle(path: str) -> bool:
    """True when ``path`` is an SQLite file stamped as an irscope bundle."""
    try:
        with open(path, "rb") as f:
            head = f.read(100)
    except OSError:
        return False
    return len(head) == 100 and head.startswith(b"SQLite format 3\x00") and int.from_bytes(head[68:72], "big") == APPLICATION_ID


def upgrade(conn: sqlite3.Connection, version: int) -> None:
    """Bring an older bundle up to this schema before writing to it (one transaction)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if version < 2:
            conn.execute("ALTER TABLE passes ADD COLUMN seconds REAL")
            conn.execute("ALTER TABLE packs ADD COLUMN run_id INTEGER REFERENCES runs(id)")
        if version < 3:
            conn.execute("ALTER TABLE captures ADD COLUMN shared_static INTEGER")
        if version < 4:
            conn.execute("CREATE TABLE helpers (capture_id INTEGER NOT NULL REFERENCES captures(id),"
                         " name TEXT NOT NULL, file TEXT NOT NULL, first_line INTEGER NOT NULL,"
                         " source TEXT NOT NULL)")
        if version < 5:
            conn.execute("ALTER TABLE captures ADD COLUMN remarks TEXT")
            conn.execute(REMARKS_TABLE)
        if version < 6:
            conn.execute(ATTACHMENTS_TABLE)
        conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def init_schema(conn: sqlite3.Connection) -> None:
    """Make the tables of a new bundle, stamped as one (a second writer that finds
    them made leaves them be)."""
    # Small pages: a bundle is mostly a few large compressed packs plus many
    # small tables, whose minimum of one page each would otherwise dominate.
    conn.execute("PRAGMA page_size=1024")
    conn.execute("BEGIN IMMEDIATE")
    # Two writers may both have found no file: the second to take the lock
    # finds the first one's schema and leaves it be.
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone():
        conn.execute("COMMIT")
        return
    conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
    for statement in SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.executemany(
        "INSERT INTO meta VALUES (?,?)",
        [("schema_version", str(SCHEMA_VERSION)), ("created", time.strftime("%Y-%m-%dT%H:%M:%S%z"))],
    )
    conn.execute("COMMIT")
