"""The parent of `irscope run` streams a record into the bundle without holding
it whole: the dump is split a piece at a time, pass texts are read back from the
dump file, blobs are hashed and compressed one text at a time. None of it may
change what is stored (docs/benchmarks.md has the memory figures)."""

from __future__ import annotations

import json
import shutil

import pytest

import irscope.capture.ingest as ingest
import irscope.store.blobs as blobs
from conftest import DATA
from irscope.store.bundle import Bundle
from irscope.compiler.passdump import split_pass_dump
from irscope.compiler.records import RunInfo

DUMPS = sorted((DATA / "ir").glob("*/*/*_passes.txt"))


def _variants():
    for path in DUMPS:
        raw = path.read_bytes()
        yield f"{path.parent.parent.name}/{path.parent.name}/{path.name}", raw
        yield f"{path.parent.name}/{path.name}+utf8", raw.replace(b"_kernel", "_k\u00e9rnel\u2192".encode())
        yield f"{path.parent.name}/{path.name}+invalid", raw.replace(b"module", b"mod\xffule", 3)


def _fields(s):
    return (s.pass_name, s.argument, s.options, s.anchor_op, s.anchor_name, s.kind, s.family, s.header)


def test_fixtures_exist():
    assert len(DUMPS) >= 5 and any("llvm" in p.name for p in DUMPS)


@pytest.mark.parametrize("piece", [300, 4000, 60000, ingest.PIECE_BYTES])
def test_split_a_piece_at_a_time_equals_the_whole_split(tmp_path, monkeypatch, piece):
    monkeypatch.setattr(ingest, "PIECE_BYTES", piece)
    for name, raw in _variants():
        path = tmp_path / "dump.txt"
        path.write_bytes(raw)
        dump = ingest._DumpFile(str(path))
        for start, end in ((0, len(raw)), (len(raw) // 3, len(raw) - 7), (0, len(raw) + 100)):
            whole = split_pass_dump(raw[start:end].decode("utf-8", "replace"))
            snaps, other, _emitters = ingest._split_dump(dump, start, end)
            assert [_fields(s) for s in snaps] == [_fields(s) for s in whole.snapshots], name
            texts = [dump.text(s.byte_spans) if isinstance(s, ingest._DumpSnapshot) else s.text for s in snaps]
            assert texts == [s.text for s in whole.snapshots], name
            assert [t for _, t in other] == [t for _, t in whole.other], name
            if b"\xff" not in raw:  # valid UTF-8: nothing of the piece is kept
                assert all(isinstance(s, ingest._DumpSnapshot) and s.stream == "" for s in snaps), name


def _record(tmp_path, dump: bytes, stages: list[tuple[str, int, int]]):
    rec = tmp_path / "rec-1-1"
    rec.mkdir()
    (rec / "dump.txt").write_bytes(dump)
    meta = {"kernel": "k", "target": "sm_90", "hash": "h", "stages": [
        {"stage": s, "dump_start": a, "dump_end": b, "ok": True} for s, a, b in stages]}
    (rec / "meta.json").write_text(json.dumps(meta))
    return rec


def _info():
    return RunInfo(["irscope", "run"], "x.py", "/", "h", "compile-only", ["sm_90"], True, "t", "2026-12-01", "python")


def test_record_texts_read_from_the_dump_are_the_whole_splits(tmp_path):
    mlir = (DATA / "ir" / "3.6.0" / "add_sm90" / "mlir_passes.txt").read_bytes()
    llvm = (DATA / "ir" / "3.6.0" / "add_sm80" / "llvm_passes.txt").read_bytes()
    dump = b"a stray line\n" + mlir + llvm + b"trailing chatter\n"
    a, b = 13, 13 + len(mlir)
    rec = _record(tmp_path, dump, [("ttgir", a, b), ("llir", b, b + len(llvm))])
    kernel = ingest.read_record(str(rec), run_tools=False)
    expected = [s.text for s in split_pass_dump(mlir.decode())] + [s.text for s in split_pass_dump(llvm.decode())]
    assert [p.text for p in kernel.passes] == expected
    assert all(isinstance(p, ingest._DumpPassRecord) for p in kernel.passes)
    assert "a stray line" in kernel.stages["log"] and "trailing chatter" in kernel.stages["log"]
    shutil.rmtree(rec)  # the sweep deletes the record once stored: the open dump still reads
    assert [p.text for p in kernel.passes] == expected
    raw = kernel.raw_bytes
    kernel.passes[0].text = "replaced"  # an assigned text is an ordinary one
    assert kernel.passes[0].text == "replaced" and kernel.passes[1].text == expected[1]

    kernel.passes[0].text = expected[0]
    with Bundle.open(str(tmp_path / "b.irscope"), create=True) as bundle:
        run = bundle.begin_run(_info())
        cid = bundle.add_capture(run, kernel)
        rows = bundle.passes(cid)
        assert [bundle.text(r.blob) for r in rows] == expected
        assert [r.size for r in rows] == [len(t.encode()) for t in expected]
        assert bundle.capture_info(cid)["raw_bytes"] == raw


def test_streamed_packs_are_the_packs_of_the_joined_texts(tmp_path, monkeypatch):
    monkeypatch.setattr(blobs, "PACK_LIMIT", 40_000)
    texts = [s.text for path in DUMPS for s in split_pass_dump(path.read_text())][:120]
    items = texts + [texts[3], b"\x00binary\xff" * 50, texts[0]]
    with Bundle.open(str(tmp_path / "b.irscope"), create=True) as bundle:
        prepared = bundle.blobs.prepare(iter(items))
        assert prepared.sizes == [len(t.encode()) if isinstance(t, str) else len(t) for t in items]
        # The reference: the distinct items in first-seen order, grouped by PACK_LIMIT, each
        # group joined and compressed at once.
        distinct = list(dict.fromkeys(t.encode() if isinstance(t, str) else t for t in items))
        groups, group, size = [], [], 0
        for raw in distinct:
            if group and size + len(raw) > blobs.PACK_LIMIT:
                groups.append(group)
                group, size = [], 0
            group.append((blobs.text_hash(raw), raw, raw.startswith(b"\x00")))
            size += len(raw)
        groups.append(group)
        reference = [blobs._Pack.build(g) for g in groups]
        assert len(prepared.packs) == len(reference) > 2
        assert prepared.packs == reference
        with bundle._tx():
            ids = bundle.blobs.put_prepared(prepared)
        assert [bundle.blobs.get(i) for i in ids] == items
        assert bundle.blobs.prepare(items).packs == []  # all stored: nothing new to compress
