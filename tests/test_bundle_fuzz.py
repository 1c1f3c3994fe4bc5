"""A damaged bundle gives a one-line error, never a traceback.

Bytes are flipped inside the fixture bundle, at offsets in the SQLite header, in
table and index pages (schema, runs, kernels, captures, blobs, stages, passes)
and inside the compressed packs; every reading command then runs on it,
in-process for speed. Each must exit 0 (the damage was in something it did not
read, or harmless) or 1 with one ``irscope: error:`` line.
"""

from __future__ import annotations

import contextlib
import io
import random
import shutil
import sqlite3
import traceback

import pytest

from conftest import DATA
from irscope.cli.main import main

FIXTURE = DATA / "samples_sm90.irscope"
PAGE = 1024  # the bundle's page size (store/bundle.py)


def run_cli(argv: list[str]) -> tuple[object, str, str]:
    """``irscope ARGV`` in this process: (exit code, stdout, stderr)."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace")
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = exc.code
        except BaseException:  # noqa: BLE001 - the test reports it
            rc = "raised"
            err.write(traceback.format_exc())
    out.flush()
    return rc, out.buffer.getvalue().decode("utf-8", "replace"), err.getvalue()


def _commands(path: str) -> list[list[str]]:
    k = "add_kernel"
    return [
        ["ls", path], ["ls", path, "--runs"], ["ls", path, "--json"], ["ls", path, "--runs", "--json"],
        ["cat", path, k, "--stage", "ttgir"], ["cat", path, k, "--pass", "3"], ["cat", path, "#6", "--stage", "ptx"],
        ["show", path, k, "--line", "25"], ["show", path, k, "--line", "25", "--json"],
        ["passes", path, k], ["passes", path, k, "--origins"],
        ["links", path, k, "--stage", "ttgir", "--op-line", "20"],
    ]


def _offsets() -> list[tuple[str, int]]:
    """(what, byte offset) to flip: header fields, a byte of each small table's pages,
    and bytes inside the first capture's pack."""
    con = sqlite3.connect(f"file:{FIXTURE}?mode=ro", uri=True)
    pages = con.execute("SELECT name, pagetype, pageno FROM dbstat ORDER BY pageno").fetchall()
    pack = con.execute("SELECT data FROM packs WHERE id=1").fetchone()[0]
    con.close()
    raw = FIXTURE.read_bytes()
    rng = random.Random(1234)
    out: list[tuple[str, int]] = [(f"header+{o}", o) for o in (16, 18, 21, 28, 40, 44, 52, 56, 68, 96)]
    seen: dict[tuple[str, str], int] = {}
    for name, kind, pageno in pages:
        if name == "packs" and kind == "overflow":
            continue  # pack contents: below, located by their bytes
        n = seen.get((name, kind), 0)
        if n >= (2 if name in ("captures", "runs", "kernels") else 1):
            continue
        seen[(name, kind)] = n + 1
        base = (pageno - 1) * PAGE
        start = 100 if pageno == 1 else 0
        out.append((f"{name}/{kind} p{pageno} head", base + start + rng.randrange(0, 12)))
        out.append((f"{name}/{kind} p{pageno} body", base + rng.randrange(PAGE // 2, PAGE)))
    for frac in (0.0, 0.3, 0.6, 0.999):  # inside the compressed bytes of pack 1 (add_kernel's texts)
        i = int(frac * (len(pack) - 64))
        at = raw.find(pack[i : i + 32])
        assert at >= 0
        out.append((f"pack1@{frac}", at + 3))
    return out


OFFSETS = _offsets()


@pytest.fixture(scope="module")
def baseline():
    """Outputs of the undamaged fixture (so a flip that changes nothing is told apart)."""
    return {tuple(c[1:]): run_cli(c) for c in _commands(str(FIXTURE))}


def test_every_read_error_is_one_line(tmp_path, baseline):
    for _, want in baseline.items():
        assert want[0] == 0
    failures = []
    path = tmp_path / "damaged.irscope"
    raw = FIXTURE.read_bytes()
    for what, offset in OFFSETS:
        data = bytearray(raw)
        data[offset] ^= 0x5A
        path.write_bytes(bytes(data))
        for argv in _commands(str(path)):
            rc, _, err = run_cli(argv)
            lines = [ln for ln in err.splitlines() if ln.strip()]
            errors = [ln for ln in lines if ln.startswith("irscope: error:")]
            ok = rc in (0, 1) and "Traceback" not in err and len(errors) <= 1
            if rc == 1:
                ok = ok and len(lines) == 1 and len(errors) == 1
            if not ok:
                failures.append(f"{what} (offset {offset}): irscope {' '.join(argv[:1] + argv[2:])} -> {rc}\n"
                                f"{err[-1500:]}")
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures[:8])


def test_corrupt_pack_names_the_bundle(tmp_path):
    path = tmp_path / "pack.irscope"
    shutil.copy(FIXTURE, path)
    con = sqlite3.connect(path)
    (data,) = con.execute("SELECT data FROM packs WHERE id=1").fetchone()
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xFF
    con.execute("UPDATE packs SET data=? WHERE id=1", (bytes(flipped),))
    con.commit()
    con.close()
    rc, _, err = run_cli(["cat", str(path), "add_kernel", "--stage", "ttgir"])
    assert rc == 1 and "Traceback" not in err and "LZMAError" not in err, err
    (line,) = err.splitlines()
    assert line.startswith("irscope: error:") and str(path) in line and "damaged" in line
