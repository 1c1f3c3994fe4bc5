"""The capture bundle: one SQLite file (schema in docs/bundle-format.md).

Writes are transactional: each kernel is stored in one transaction, and a run
is marked complete only when it ends normally. A crash, kill or Ctrl-C leaves
the bundle as it was plus every kernel committed so far, with the run marked
incomplete; SQLite's journal rolls back a half-written kernel on next open.
"""

from __future__ import annotations

import functools
import itertools
import json
import lzma
import os
import sqlite3
import time
from typing import TYPE_CHECKING

from irscope.compiler.stages import stage_rank
from irscope.errors import IrscopeError
from irscope.store.attachments import insert_attachment
from irscope.store.blobs import BlobStore
from irscope.store.rows import CaptureRow, PassRow
from irscope.store.schema import BUSY_TIMEOUT_MS, SCHEMA_VERSION, init_schema, is_bundle, upgrade

__all__ = ["GLOBALS", "LAUNCH", "READ_ERRORS", "SCHEMA_VERSION", "Bundle", "CaptureRow", "PassRow", "is_bundle",
           "unreadable"]

LAUNCH = "launch"
"""The attachment kind of a capture's launch: ``{"grid": [x, y, z] | None, "args": {name:
{"shape", "stride", "dtype"} | {"value"}}}``, written with the capture when a launch compiled it."""
GLOBALS = "globals"
"""The attachment kind of the module-level values a capture's kernel (and its helpers) read:
``{name: {"expr": python} | {"import": statement} | {"repr": text}}``, written with the capture."""

if TYPE_CHECKING:  # a reader never builds these: they cost an import on every open
    from irscope.compiler.records import CapturedKernel, RunInfo
    from irscope.compiler.remarks import Remark


def _meta(field: str) -> str:
    """SQL for one field of a capture's metadata JSON (NULL when the text is not JSON)."""
    return f"CASE WHEN json_valid(c.metadata) THEN json_extract(c.metadata, '$.{field}') END"


READ_ERRORS = (sqlite3.DatabaseError, lzma.LZMAError, EOFError, ValueError, TypeError, KeyError, IndexError,
               AttributeError, OverflowError)
"""What a damaged bundle can make a read raise: SQLite's "malformed" and decode
errors, a pack that does not decompress, JSON that does not parse
(``json.JSONDecodeError`` and ``UnicodeDecodeError`` are ValueErrors), a row whose
values have the wrong types."""


def unreadable(path: str, exc: BaseException) -> IrscopeError:
    """The one-line error for a read that failed on a damaged (or not quite valid) bundle."""
    if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
        return IrscopeError(f"{path}: bundle is locked by another process ({exc})")
    detail = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, (KeyError, TypeError, IndexError, AttributeError)):
        detail = f"{type(exc).__name__}: {detail}"
    return IrscopeError(f"{path}: damaged bundle ({detail})")


def _read(method):
    """Turn what a damaged bundle makes ``method`` raise into one IrscopeError naming it."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except READ_ERRORS as exc:
            raise unreadable(self.path, exc) from None

    return wrapper


def _check_writable(path: str, exists: bool) -> None:
    """IrscopeError when ``path`` cannot be written, checked by opening it (os.access
    says yes to root, and under /proc or a read-only mount)."""
    try:
        if exists:
            with open(path, "r+b"):
                pass
        else:  # a probe of its own name: another writer may be creating ``path`` meanwhile
            import tempfile  # noqa: PLC0415 - writers only

            with tempfile.TemporaryFile(dir=os.path.dirname(os.path.abspath(path)), prefix=".irscope-probe-"):
                pass
    except OSError as exc:
        where = "" if exists else "no file can be created in its folder: "
        raise IrscopeError(f"cannot write {path}: {where}{exc.strerror or exc}") from None


def _being_created(path: str) -> bool:
    """An empty file: SQLite has created it but no writer has committed a schema yet."""
    try:
        return os.path.getsize(path) == 0
    except OSError:
        return False


class Bundle:
    """An open bundle. Use :meth:`open` (read, or read/write) and :meth:`close`."""

    def __init__(self, path: str, conn: sqlite3.Connection):
        self.path = path
        self.conn = conn
        self.blobs = BlobStore(conn, path)
        columns = {row[1] for row in conn.execute("PRAGMA table_info(passes)")}
        self._pass_seconds = "seconds" if "seconds" in columns else "NULL"  # schema v1 had none
        columns = {row[1] for row in conn.execute("PRAGMA table_info(captures)")}
        self._shared_static = "c.shared_static" if "shared_static" in columns else "NULL"  # v3

    # -- opening -----------------------------------------------------------
    @classmethod
    def open(cls, path: str, *, create: bool = False) -> "Bundle":
        """Open ``path``; with ``create``, make a new bundle if it does not exist.

        Raises IrscopeError for a file that is not a bundle (it is never touched)
        or a bundle from a newer irscope.
        """
        if os.path.isdir(path):
            raise IrscopeError(f"{path} is a directory, not a bundle" if not create
                               else f"cannot write {path}: it is a directory")
        exists = os.path.exists(path)
        if exists and create and _being_created(path):
            exists = False  # another writer made the file and is writing its schema
        if exists and not is_bundle(path):
            raise IrscopeError(f"{path} is not an irscope bundle")
        if not exists and not create:
            raise IrscopeError(f"{path}: no such bundle")
        if not exists:
            parent = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(parent):
                raise IrscopeError(f"cannot write {path}: folder {parent} does not exist")
            if not os.access(parent, os.W_OK):
                raise IrscopeError(f"cannot write {path}: folder {parent} is not writable")
        elif create and not os.access(path, os.W_OK):
            raise IrscopeError(f"cannot write {path}: file is not writable")
        if create:
            _check_writable(path, exists)
        conn = None
        try:
            # One connection per thread is the caller's rule (the core keeps one per
            # thread); check_same_thread=False only lets close() run from any thread.
            # The read-only URI quotes the path: '#', '?' and '%' are legal in file names.
            import urllib.parse  # noqa: PLC0415  (quoting the read-only URI; ~5 ms to import)

            conn = sqlite3.connect(path if create else f"file:{urllib.parse.quote(os.fsencode(os.path.abspath(path)))}?mode=ro",
                                   uri=not create, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            if not exists:
                init_schema(conn)
            version = int(conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0])
            if version > SCHEMA_VERSION:
                raise IrscopeError(f"{path}: bundle schema {version} is newer than this irscope reads ({SCHEMA_VERSION})")
            if version < SCHEMA_VERSION and create:
                upgrade(conn, version)
            return cls(path, conn)
        except BaseException as exc:
            if conn is not None:
                conn.close()
            if isinstance(exc, IrscopeError) or not isinstance(exc, READ_ERRORS):
                raise
            if create and isinstance(exc, sqlite3.OperationalError) and "unable to open" in str(exc):
                raise IrscopeError(f"cannot write {path}: {' '.join(str(exc).split())}") from None
            if isinstance(exc, sqlite3.DatabaseError):
                raise IrscopeError(f"{path}: unreadable bundle ({' '.join(str(exc).split())})") from None
            raise unreadable(path, exc) from None

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Bundle":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- writing -----------------------------------------------------------
    def begin_run(self, info: RunInfo) -> int:
        """Record a new capture run (incomplete until :meth:`finish_run`)."""
        with self._tx():
            cur = self.conn.execute(
                "INSERT INTO runs(started, mode, targets, llvm_passes, command, script, cwd, host, python_executable,"
                " irscope_version, env) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (info.started, info.mode, json.dumps(info.targets), int(info.llvm_passes), json.dumps(info.command),
                 info.script, info.cwd, info.host, info.python_executable, info.irscope_version, json.dumps(info.env)),
            )
        assert cur.lastrowid is not None  # set by the INSERT just made
        return cur.lastrowid

    def discard_run(self, run_id: int) -> bool:
        """Remove a run that stored no capture (an ``irscope compile`` whose spec did not
        fit the kernel: it compiled nothing, so the bundle keeps no trace of it). False,
        and nothing removed, when the run holds captures."""
        with self._tx():
            for table in ("captures", "packs"):  # (two constant names, not input)
                if self.conn.execute(f"SELECT 1 FROM {table} WHERE run_id=? LIMIT 1", (run_id,)).fetchone():
                    return False
            self.conn.execute("DELETE FROM runs WHERE id=?", (run_id,))
        return True

    def finish_run(self, run_id: int, *, complete: bool, status: str, error: str | None = None,
                   mode: str | None = None, targets: list[str] | None = None) -> None:
        """Close a run: ``complete`` only when it ended normally. ``mode`` and
        ``targets``, when given, replace what was known at its start (``auto``:
        the child decides between GPU and compile-only)."""
        with self._tx():
            self.conn.execute(
                "UPDATE runs SET finished=?, complete=?, status=?, error=? WHERE id=?",
                (time.strftime("%Y-%m-%dT%H:%M:%S%z"), int(complete), status, error, run_id),
            )
            if mode:
                self.conn.execute("UPDATE runs SET mode=? WHERE id=?", (mode, run_id))
            if targets:
                self.conn.execute("UPDATE runs SET targets=? WHERE id=?", (json.dumps(targets), run_id))

    def add_capture(self, run_id: int, k: CapturedKernel) -> int:
        """Store one captured kernel in a single transaction; returns its id."""
        # Compress before taking the write lock. The texts are handed over one at a
        # time (a capture's pass texts may be read from its dump file on access:
        # capture/ingest.py), so they are never all in memory at once. The stages go
        # first: a pack is read from its start (store/blobs.py), and the stages are
        # what views and diffs read; a pass snapshot equal to a stage is stored once.
        prepared = self.blobs.prepare(itertools.chain(k.stages.values(), (p.text for p in k.passes)))
        sizes = prepared.sizes
        with self._tx():
            import hashlib  # noqa: PLC0415  (writers only)

            source_hash = hashlib.sha256((k.source or "").encode()).hexdigest()[:32]
            self.conn.execute(
                "INSERT OR IGNORE INTO kernels(name, file, first_line, source, source_hash) VALUES (?,?,?,?,?)",
                (k.kernel, k.file, k.first_line, k.source, source_hash),
            )
            kernel_id = self.conn.execute(
                "SELECT id FROM kernels WHERE name=? AND file IS ? AND first_line IS ? AND source_hash=?",
                (k.kernel, k.file, k.first_line, source_hash),
            ).fetchone()[0]
            r = k.resources
            cur = self.conn.execute(
                "INSERT INTO captures(run_id, kernel_id, variant, target, hash, triton_version, torch_version,"
                " python_version, host, argv, started, mode, signature, constexprs, attrs, options, metadata,"
                " compile_seconds, stage_seconds, registers, spill_stores, spill_loads, shared, local, stack,"
                " resource_source, raw_bytes, error, error_detail, failed_stage, failed_pass, notes, shared_static,"
                " remarks) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (run_id, kernel_id, k.variant, k.target, k.hash, k.versions.get("triton"), k.versions.get("torch"),
                 k.versions.get("python"), k.host, json.dumps(k.argv), k.started, k.mode, json.dumps(k.signature),
                 json.dumps(k.constexprs), json.dumps(k.attrs), json.dumps(k.options, default=repr),
                 json.dumps(k.metadata, default=repr), k.compile_seconds, json.dumps(k.stage_seconds), r.registers,
                 r.spill_stores, r.spill_loads, r.shared, r.local, r.stack, r.source, sum(sizes), k.error,
                 k.error_detail, k.failed_stage, k.failed_pass, json.dumps(k.notes), r.shared_static,
                 k.remarks_status),
            )
            cid = cur.lastrowid
            assert cid is not None  # set by the INSERT just made
            keys = self.blobs.put_prepared(prepared, run_id)
            n = len(k.stages)
            self.conn.executemany(
                "INSERT INTO passes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [(cid, p.seq, p.stage, p.kind, p.when, p.name, p.argument, p.options, p.anchor, p.anchor_name, key,
                  size, p.seconds) for p, key, size in zip(k.passes, keys[n:], sizes[n:])],
            )
            self.conn.executemany(
                "INSERT INTO stages VALUES (?,?,?,?)",
                [(cid, stage, key, size) for stage, key, size in zip(k.stages, keys, sizes)],
            )
            self.conn.executemany("INSERT INTO helpers VALUES (?,?,?,?,?)",
                                  [(cid, h.name, h.file, h.first_line, h.source) for h in k.helpers])
            self.conn.executemany("INSERT INTO remarks VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                                  [(cid, i, m.file, m.line, m.column, m.severity, m.text, m.pass_name, m.stage,
                                    json.dumps(m.called_from), json.dumps(m.notes)) for i, m in enumerate(k.remarks)])
            if k.launch:
                insert_attachment(self.conn, LAUNCH, cid, k.kernel, k.launch)
            if k.globals:
                insert_attachment(self.conn, GLOBALS, cid, k.kernel, k.globals)
        return cid

    def set_driver_resources(self, run_id: int, kernel_hash: str, n_regs: int | None, n_spills: int | None) -> int:
        """Replace resource counts with the driver's (real GPU); returns rows updated."""
        with self._tx():
            cur = self.conn.execute(
                "UPDATE captures SET registers=?, spill_stores=?, spill_loads=NULL, resource_source='driver'"
                " WHERE run_id=? AND hash=?",
                (n_regs, n_spills, run_id, kernel_hash),
            )
        return cur.rowcount

    def set_launch_refused(self, run_id: int, kernel_hash: str, error: str, detail: str, note: str | None = None) -> int:
        """Mark the run's captures of a kernel Triton refused to launch (OutOfResources)
        as failed at stage ``launch``, with the reason; returns rows updated."""
        with self._tx():
            rows = self.conn.execute("SELECT id, notes FROM captures WHERE run_id=? AND hash=? AND error IS NULL",
                                     (run_id, kernel_hash)).fetchall()
            for cid, notes in rows:
                kept = json.loads(notes or "[]") + ([note] if note else [])
                self.conn.execute("UPDATE captures SET error=?, error_detail=?, failed_stage='launch', notes=?"
                                  " WHERE id=?", (error, detail, json.dumps(kept), cid))
        return len(rows)

    def _tx(self):
        return _Transaction(self.conn)

    # -- reading -----------------------------------------------------------
    @_read
    def captures(self, kernel: str | None = None) -> list[CaptureRow]:
        """Every capture, in capture order; optionally only one kernel's."""
        sql = (
            "SELECT c.id, c.run_id, k.name, k.file, k.first_line, c.variant, c.target, c.triton_version,"
            " c.torch_version, c.python_version,"
            " (SELECT group_concat(stage, ',') FROM stages s WHERE s.capture_id=c.id),"
            " (SELECT count(*) FROM passes p WHERE p.capture_id=c.id), c.raw_bytes, r.complete, c.mode,"
            " c.registers, c.spill_stores, c.spill_loads, c.shared, c.local, c.stack, c.resource_source,"
            " c.compile_seconds, c.error, c.failed_stage, c.failed_pass, c.notes,"
            f" {self._shared_static}, {_meta('shared')}, {_meta('num_warps')},"
            f" coalesce({_meta('warp_size')}, {_meta('target.warp_size')}), c.error_detail"
            " FROM captures c JOIN kernels k ON k.id=c.kernel_id JOIN runs r ON r.id=c.run_id"
        )
        args: tuple = ()
        if kernel is not None:
            sql += " WHERE k.name=?"
            args = (kernel,)
        rows = self.conn.execute(sql + " ORDER BY c.id", args).fetchall()
        out = []
        for row in rows:
            row = list(row)
            row[10] = tuple(sorted((row[10] or "").split(","), key=stage_rank)) if row[10] else ()
            row[13] = bool(row[13])
            row[26] = tuple(json.loads(row[26])) if row[26] else ()
            out.append(CaptureRow(*row))
        return out

    @_read
    def capture_info(self, capture_id: int) -> dict:
        """All columns of one capture, JSON fields decoded."""
        cur = self.conn.execute("SELECT * FROM captures WHERE id=?", (capture_id,))
        row = cur.fetchone()
        if row is None:
            raise IrscopeError(f"no capture {capture_id}")
        info = dict(zip([d[0] for d in cur.description], row))
        for key in ("argv", "signature", "constexprs", "attrs", "options", "metadata", "stage_seconds", "notes"):
            if info.get(key):
                info[key] = json.loads(info[key])
        return info

    @_read
    def kernel_source(self, capture_id: int) -> tuple[str | None, int | None]:
        """(source of the ``@triton.jit`` function, line of its ``def``) for a capture."""
        row = self.conn.execute(
            "SELECT k.source, k.first_line FROM kernels k JOIN captures c ON c.kernel_id = k.id WHERE c.id=?",
            (capture_id,),
        ).fetchone()
        return (row[0], row[1]) if row else (None, None)

    @_read
    def helper_sources(self, capture_id: int) -> list[tuple[str, str, int, str]]:
        """(name, file, def line, source) of each ``@triton.jit`` helper stored with a
        capture; none in a bundle of schema 3 or older (they stored no helpers)."""
        if not self.conn.execute("SELECT 1 FROM sqlite_master WHERE name='helpers'").fetchone():
            return []
        return [(r[0], r[1], r[2], r[3]) for r in self.conn.execute(
            "SELECT name, file, first_line, source FROM helpers WHERE capture_id=? ORDER BY file, first_line",
            (capture_id,))]

    @_read
    def remarks(self, capture_id: int) -> tuple[str | None, list[Remark]]:
        """(status, remarks) of a capture: the status is ``compiler/remarks.py``'s
        RECORDED, OFF or UNSUPPORTED; None in a bundle of schema 4 or older, or for a
        capture an irscope that kept no remarks added to an upgraded one."""
        from irscope.compiler.remarks import Remark  # noqa: PLC0415  (read when asked for)

        if not self.conn.execute("SELECT 1 FROM sqlite_master WHERE name='remarks'").fetchone():
            return None, []
        status = self.conn.execute("SELECT remarks FROM captures WHERE id=?", (capture_id,)).fetchone()
        rows = self.conn.execute(
            "SELECT file, line, col, severity, text, pass_name, stage, called_from, notes FROM remarks"
            " WHERE capture_id=? ORDER BY seq", (capture_id,)).fetchall()
        return (status[0] if status else None), [
            Remark(r[0], r[1], r[2], r[3], r[4], r[5], r[6], tuple(tuple(c) for c in json.loads(r[7])),
                   tuple(json.loads(r[8]))) for r in rows]

    @_read
    def runs(self) -> list[dict]:
        """Every run, oldest first, JSON fields decoded."""
        cur = self.conn.execute("SELECT * FROM runs ORDER BY id")
        cols = [d[0] for d in cur.description]
        out = []
        for row in cur.fetchall():
            r = dict(zip(cols, row))
            for key in ("targets", "command", "env"):
                r[key] = json.loads(r[key])
            r["complete"] = bool(r["complete"])
            out.append(r)
        return out

    @_read
    def stage_text(self, capture_id: int, stage: str) -> str | bytes:
        """The final text (or binary) of one stage of one capture."""
        row = self.conn.execute("SELECT blob FROM stages WHERE capture_id=? AND stage=?", (capture_id, stage)).fetchone()
        if row is None:
            raise IrscopeError(f"capture {capture_id} has no stage {stage!r}")
        return self.blobs.get(row[0])

    @_read
    def passes(self, capture_id: int) -> list[PassRow]:
        """The per-pass snapshots of a capture, in order (texts not loaded)."""
        rows = self.conn.execute(
            'SELECT seq, stage, kind, "when", name, argument, options, anchor, anchor_name, blob, size,'
            f" {self._pass_seconds} FROM passes WHERE capture_id=? ORDER BY seq",
            (capture_id,),
        ).fetchall()
        return [PassRow(*r) for r in rows]

    @_read
    def text(self, blob: int) -> str | bytes:
        """A stored text by its blob id."""
        return self.blobs.get(blob)

    @_read
    def stored_bytes(self) -> int:
        """Bytes of compressed blob payloads (what the texts cost on disk)."""
        return self.blobs.stored_bytes()


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception (Ctrl-C too)."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self):
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")
        return False
