"""Bundle store: content addressing, packs, schema stamp, transactions (no Triton)."""

import sqlite3

import pytest

from irscope.compiler.records import CapturedKernel, PassRecord, Resources, RunInfo
from irscope.errors import IrscopeError
from irscope.store.bundle import Bundle, is_bundle


def _kernel(name="k", passes=3, text="module {\n  %0 = arith.constant 0 : i32\n}\n"):
    return CapturedKernel(
        kernel=name, file="/x/k.py", first_line=3, source="def k(): pass", target="sm_90", variant="B=1",
        hash="h-" + name, signature={}, constexprs={"B": 1}, attrs={}, options={"num_warps": 4}, versions={"triton": "3.6.0"},
        host="h", argv=["k.py"], started="now", compile_seconds=0.5, stage_seconds={"ttir": 0.1},
        stages={"ttir": text, "cubin": b"\x00\x01binary"},
        passes=[PassRecord(i, "ttir", "mlir", "before", f"P{i}", f"p{i}", "", "builtin.module", "", text) for i in range(passes)],
        resources=Resources(registers=26, spill_stores=0, spill_loads=0, shared=0, source="test"), metadata={}, mode="compile-only",
    )


def _run(b):
    return b.begin_run(RunInfo(["irscope"], "k.py", "/", "h", "compile-only", ["sm_90"], False, "0", "now", "python"))


def test_roundtrip_and_dedup(tmp_path):
    path = str(tmp_path / "b.irscope")
    with Bundle.open(path, create=True) as b:
        run = _run(b)
        cid = b.add_capture(run, _kernel())
        b.add_capture(run, _kernel("k2"))
        b.finish_run(run, complete=True, status="ok")
    assert is_bundle(path)
    with Bundle.open(path) as b:
        rows = b.captures()
        assert [r.kernel for r in rows] == ["k", "k2"]
        assert rows[0].stages == ("ttir", "cubin") and rows[0].passes == 3 and rows[0].complete
        assert b.stage_text(cid, "cubin") == b"\x00\x01binary"
        passes = b.passes(cid)
        assert b.text(passes[2].blob) == _kernel().passes[2].text
        # identical texts are stored once across passes, stages and captures
        assert b.conn.execute("SELECT count(*) FROM blobs").fetchone()[0] == 2


def test_not_a_bundle_is_never_touched(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello")
    with pytest.raises(IrscopeError, match="not an irscope bundle"):
        Bundle.open(str(p), create=True)
    assert p.read_text() == "hello"
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t(x)")
    with pytest.raises(IrscopeError, match="not an irscope bundle"):
        Bundle.open(str(other))


def test_failed_capture_write_rolls_back(tmp_path):
    path = str(tmp_path / "b.irscope")
    with Bundle.open(path, create=True) as b:
        run = _run(b)
        b.add_capture(run, _kernel())
        bad = _kernel("bad")
        bad.passes.append("not a pass record")  # fails mid-transaction
        with pytest.raises(AttributeError):
            b.add_capture(run, bad)
        assert [r.kernel for r in b.captures()] == ["k"]
        assert b.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert not b.runs()[0]["complete"]


def test_missing_bundle_and_unwritable_folder(tmp_path):
    with pytest.raises(IrscopeError, match="no such bundle"):
        Bundle.open(str(tmp_path / "nope.irscope"))
    with pytest.raises(IrscopeError, match="does not exist"):
        Bundle.open(str(tmp_path / "no" / "dir" / "b.irscope"), create=True)


def test_bundle_path_with_non_utf8_bytes_opens_read_only(tmp_path):
    # A file name that is not UTF-8 (legal on Linux) reaches us as surrogates; the
    # read-only URI must carry its raw bytes, not fail as a "damaged bundle".
    import os
    import shutil
    from pathlib import Path

    src = Path(__file__).parent / "data" / "samples_sm90.irscope"
    odd = os.path.join(os.fsencode(tmp_path), b"b\xff.irscope")
    shutil.copyfile(src, odd)
    with Bundle.open(os.fsdecode(odd)) as b:
        assert len(b.captures()) > 0


def test_a_text_near_a_packs_start_is_read_without_the_rest(tmp_path):
    """A pack is decompressed only as far as it is read: the first text reads even when
    the pack's tail is damaged, and reading past the damage says so in one line."""
    import random

    from irscope.store.blobs import BlobStore

    conn = sqlite3.connect(":memory:")
    conn.executescript("CREATE TABLE packs (id INTEGER PRIMARY KEY, codec TEXT NOT NULL, raw_size INTEGER NOT NULL,"
                       " data BLOB NOT NULL, run_id INTEGER);"
                       "CREATE TABLE blobs (id INTEGER PRIMARY KEY, hash BLOB NOT NULL UNIQUE, pack INTEGER NOT NULL,"
                       " offset INTEGER NOT NULL, size INTEGER NOT NULL, binary INTEGER NOT NULL);")
    store = BlobStore(conn, "t.irscope")
    rng = random.Random(3)
    first = "module { // the stage text a viewer opens first }\n"
    # incompressible bulk after it, so its damage lies far past the first text's bytes
    bulk = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(3 << 20))
    a, b = store.put_many([first, bulk])
    assert store.get(a) == first and store.get(b) == bulk  # intact: both read
    data = bytearray(conn.execute("SELECT data FROM packs").fetchone()[0])
    data[len(data) // 2: len(data) // 2 + 64] = bytes(64)
    conn.execute("UPDATE packs SET data=?", (bytes(data),))
    fresh = BlobStore(conn, "t.irscope")
    assert fresh.get(a) == first
    with pytest.raises(IrscopeError, match=r"t.irscope: damaged bundle: pack 1 does not decompress"):
        fresh.get(b)
    cut = BlobStore(conn, "t.irscope")
    conn.execute("UPDATE packs SET data=?", (bytes(data[: len(data) // 4]),))
    assert cut.get(a) == first
    with pytest.raises(IrscopeError, match=r"pack 1 does not decompress \(Compressed data ended"):
        cut.get(b)
