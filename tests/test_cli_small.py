"""Small command-line contracts, on the fixture bundle (no compile): line ranges,
binary stages and ``cat -o``, ``--origins --stage``, unwritable outputs, odd paths."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import stat

import pytest

import irscope
from conftest import DATA, irscope as irscope_cli
from irscope.cli.main import main
from irscope.errors import IrscopeError
from irscope.store.bundle import Bundle

FIXTURE = str(DATA / "samples_sm90.irscope")


class _Tty(io.TextIOWrapper):
    def isatty(self):
        return True


def run_cli(argv, tty=False):
    """``irscope ARGV`` in this process: (exit code, stdout, stderr)."""
    out = (_Tty if tty else io.TextIOWrapper)(io.BytesIO(), encoding="utf-8")
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = exc.code
    out.flush()
    return rc, out.buffer.getvalue().decode("utf-8", "replace"), err.getvalue()


def _one_error(rc, err, *needles):
    assert rc == 1 and "Traceback" not in err, err
    (line,) = err.splitlines()
    assert line.startswith("irscope: error:")
    for n in needles:
        assert n in line, line


def test_show_line_out_of_range_and_zero():
    with irscope.open(FIXTURE) as b:
        file = b.capture("add_kernel").row.file
    n_lines = len(open(file, encoding="utf-8").read().splitlines())
    rc, _, err = run_cli(["show", FIXTURE, "add_kernel", "--line", str(n_lines + 1)])
    _one_error(rc, err, "out of range", f"{n_lines} lines")
    rc, _, err = run_cli(["show", FIXTURE, "add_kernel", "--line", "0"])
    _one_error(rc, err, "lines start at 1")
    rc, _, err = run_cli(["show", FIXTURE, "add_kernel", "--line", "-3"])
    _one_error(rc, err, "lines start at 1")
    assert run_cli(["show", FIXTURE, "add_kernel", "--line", str(n_lines)])[0] == 0  # the last line is in range


def test_cat_binary_to_terminal_refuses_and_o_writes_it(tmp_path):
    rc, out, err = run_cli(["cat", FIXTURE, "add_kernel", "--stage", "cubin"], tty=True)
    _one_error(rc, err, "binary", "-o FILE", "pipe")
    assert out == ""
    with irscope.open(FIXTURE) as b:
        cubin = b.capture("add_kernel").stage("cubin").text
        ttgir = b.capture("add_kernel").stage("ttgir").text
    dest = tmp_path / "k.cubin"
    dest.write_text("old")  # replaced whole
    rc, out, err = run_cli(["cat", FIXTURE, "add_kernel", "--stage", "cubin", "-o", str(dest)], tty=True)
    assert rc == 0 and out == "" and err == ""
    assert dest.read_bytes() == cubin
    text_dest = tmp_path / "k.ttgir"
    assert run_cli(["cat", FIXTURE, "add_kernel", "-o", str(text_dest)])[0] == 0
    assert text_dest.read_text() == ttgir
    assert stat.S_IMODE(os.stat(text_dest).st_mode) & 0o044  # the umask's mode, not mkstemp's 0600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.cubin", "k.ttgir"]  # no temporary left behind
    rc, _, err = run_cli(["cat", FIXTURE, "add_kernel", "-o", str(tmp_path)])
    _one_error(rc, err, "is a directory")
    rc, _, err = run_cli(["cat", FIXTURE, "add_kernel", "-o", "/proc/irscope-test.ttgir"])
    _one_error(rc, err, "cannot write")


def test_origins_honours_stage():
    rc, out, err = run_cli(["passes", FIXTURE, "add_kernel", "--origins", "--stage", "ptx"])
    _one_error(rc, err, "--origins", "'ptx'")
    rc, out, err = run_cli(["passes", FIXTURE, "add_kernel", "--origins", "--stage", "ttir"])
    assert rc == 0 and "final ttir" in out and "final ttgir" not in out
    import json

    rc, out, _ = run_cli(["passes", FIXTURE, "add_kernel", "--origins", "--stage", "ttgir", "--json"])
    assert rc == 0 and list(json.loads(out)["stages"]) == ["ttgir"]
    rc, _, err = run_cli(["passes", FIXTURE, "add_kernel", "--origins", "--changed"])
    _one_error(rc, err, "--changed")


def test_unwritable_bundle_paths(tmp_path):
    with pytest.raises(IrscopeError, match="cannot write /proc/x.irscope"):
        Bundle.open("/proc/x.irscope", create=True)
    with pytest.raises(IrscopeError, match="is a directory"):
        Bundle.open(str(tmp_path), create=True)
    rc, _, err = run_cli(["ls", str(tmp_path)])
    _one_error(rc, err, "is a directory")
    script = tmp_path / "ok.py"
    script.write_text("print('hi')\n")
    for out, message in (("/proc/x.irscope", "cannot write /proc/x.irscope"), (str(tmp_path), "is a directory")):
        p = irscope_cli("run", script, "-o", out)
        assert p.returncode != 0 and "Traceback" not in p.stderr, p.stderr
        assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_bundle_path_with_uri_characters(tmp_path):
    odd = tmp_path / "a#b?c%d [x].irscope"
    shutil.copy(FIXTURE, odd)
    rc, out, err = run_cli(["ls", str(odd), "--json"])
    assert rc == 0 and err == "" and len(__import__("json").loads(out)) == 6


def test_show_line_summary_and_all():
    """``show --line`` on the tl.dot line of matmul: a count and an op-name breakdown
    per stage, the first ops of each, long lines cut; --all prints everything."""
    with irscope.open(FIXTURE) as b:
        cap = b.capture("matmul_kernel")
        line = next(i for i in range(cap.source.first_line, cap.source.last_line + 1)
                    if "tl.dot(" in (cap.source.line(i) or ""))
        found = cap.ops_at_line(line)
    llir = found["llir"]
    assert len(llir) > 100
    rc, out, _ = run_cli(["show", FIXTURE, "matmul_kernel", "--line", str(line)])
    assert rc == 0
    lines = out.splitlines()
    from collections import Counter

    top, n = Counter(op.name for op in llir).most_common(1)[0]
    assert any(ln.startswith(f"llir: {len(llir)} ops: {n} {top}") for ln in lines), out
    assert len(lines) < 80 and max(map(len, lines)) <= 200
    assert "--all" in out
    rc, full, _ = run_cli(["show", FIXTURE, "matmul_kernel", "--line", str(line), "--all"])
    assert rc == 0
    for op in llir:
        assert op.text.strip() in full
    rc, js, _ = run_cli(["show", FIXTURE, "matmul_kernel", "--line", str(line), "--json"])
    import json

    assert len(json.loads(js)["stages"]["llir"]) == len(llir)
