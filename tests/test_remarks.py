"""Triton's remarks, recorded by ``irscope run`` (MLIR_ENABLE_DIAGNOSTICS=remarks, 3.6+).

The kernels (tests/kernels/why_remarks.py) are compiled with ``triton.compile`` for
sm_90, so the captured compile and the one run directly under Python with the
variable set are the same compile, and what Triton prints there is what the bundle
must hold.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import irscope
from irscope.compiler.remarks import parse_diagnostics
from conftest import DATA, SAMPLES, VENVS, irscope as run_irscope
from setup_guard import setup_missing

KERNELS = Path(__file__).resolve().parent / "kernels"
SCRIPT = KERNELS / "why_remarks.py"
PY39 = VENVS / "triton-3.9" / "bin" / "python"
# What MLIR's diagnostic handler prints first for each diagnostic (read here with a
# pattern of the test's own, not irscope's parser).
_PRINTED = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<sev>remark|warning|error): (?P<text>.*)$")

def _direct(python: str, which: str, tmp: Path) -> tuple[int, list[tuple[str, int, int, str, str]]]:
    """Run the script directly with remarks on (a fresh Triton cache): its exit code
    and the diagnostics its stderr holds, as (file, line, col, severity, text)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IRSCOPE_", "MLIR_", "TRITON_"))}
    env.update(MLIR_ENABLE_DIAGNOSTICS="remarks", TRITON_CACHE_DIR=str(tmp / f"cache-{which}"),
               PYTHONPATH="")
    p = subprocess.run([python, str(SCRIPT), which], capture_output=True, text=True, env=env, timeout=600)
    found = [(m["file"], int(m["line"]), int(m["col"]), m["sev"], m["text"].rstrip())
             for m in map(_PRINTED.match, p.stderr.splitlines()) if m]
    return p.returncode, found


def _capture(tmp: Path, name: str, which: str, *flags: str):
    bundle = tmp / f"{name}.irscope"
    p = run_irscope("run", SCRIPT, "-o", bundle, "-q", "--no-open", *flags, "--", which)
    assert bundle.exists(), p.stderr
    caps = irscope.open(str(bundle)).captures()
    assert len(caps) == 1, p.stderr
    return caps[0]


def _stored(cap) -> list[tuple[str, int, int, str, str]]:
    return [(r.file, r.line, r.column, r.severity, r.text) for r in cap.remarks()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("remarks")
    return {
        "on": _capture(tmp, "on", "ok"),
        "off": _capture(tmp, "off", "ok", "--no-remarks"),
        "fail": _capture(tmp, "fail", "fail"),
        "crash": _capture(tmp, "crash", "crash"),
        "direct_ok": _direct(sys.executable, "ok", tmp),
        "direct_fail": _direct(sys.executable, "fail", tmp),
        "direct_crash": _direct(sys.executable, "crash", tmp),
    }


@pytest.mark.slow
def test_stored_remarks_are_what_triton_prints(runs):
    cap = runs["on"]
    code, printed = runs["direct_ok"]
    assert code == 0
    assert printed and all("vectorization fails" in p[4] for p in printed)
    rs = cap.remarks()
    assert rs.available and rs.why_not is None
    assert _stored(cap) == printed


@pytest.mark.slow
def test_each_remark_knows_its_stage_pass_and_call_site(runs):
    cap = runs["on"]
    source = SCRIPT.read_text().splitlines()
    helper_line = next(i for i, ln in enumerate(source, 1) if "return tl.load(ptr + offs" in ln)
    call_line = next(i for i, ln in enumerate(source, 1) if "x = _load_masked(" in ln)
    rs = cap.remarks()
    load = next(r for r in rs if r.line == helper_line)
    assert load.stage == "llir" and load.pass_name == "ConvertTritonGPUToLLVM"
    assert load.pass_name in {p.name for p in cap.passes(stage="llir")}
    assert [(Path(f).name, ln) for f, ln, _ in load.called_from] == [("why_remarks.py", call_line)]
    # The helper's remark stays on the helper's line; the call line holds it only with call sites.
    assert rs.at_line(helper_line, cap.file) == (load,)
    assert rs.at_line(call_line, cap.file) == ()
    assert rs.at_line(call_line, cap.file, call_sites=True) == (load,)
    assert set(rs.by_line()) == {(r.file, r.line) for r in rs}


@pytest.mark.slow
def test_remarks_are_kept_when_the_compile_fails(runs):
    cap = runs["fail"]
    code, printed = runs["direct_fail"]
    assert code != 0 and cap.failed and cap.failed_stage == "cubin"
    assert printed and _stored(cap) == printed


@pytest.mark.slow
def test_remarks_are_kept_when_the_compiler_crashes(runs):
    """LLVM aborts the child after the remarks were printed: the capture recovered from
    the unfinished record holds them."""
    cap = runs["crash"]
    code, printed = runs["direct_crash"]
    assert code != 0 and cap.failed and "crashed" in (cap.error or "")
    assert printed and _stored(cap) == printed


@pytest.mark.slow
def test_remarks_do_not_change_the_ir(runs):
    on, off = runs["on"], runs["off"]
    assert on.remarks().available and len(on.remarks()) > 0
    rs = off.remarks()
    assert not rs.available and len(rs) == 0 and "--no-remarks" in (rs.why_not or "")
    for stage in ("ttir", "ttgir", "llir", "ptx"):
        assert on.stage(stage).text == off.stage(stage).text, stage


@pytest.mark.slow
def test_show_lists_the_remarks_of_a_line(runs):
    cap = runs["on"]
    line = next(r.line for r in cap.remarks() if not r.called_from)
    bundle = cap.bundle.path
    out = run_irscope("show", bundle, cap.kernel, "--line", line, check=True).stdout
    assert "remarks (1):" in out and "vectorization fails" in out
    js = run_irscope("show", bundle, cap.kernel, "--line", line, "--json", check=True).stdout
    assert '"pass": "ConvertTritonGPUToLLVM"' in js


@pytest.mark.slow
def test_triton_39_remarks_are_what_it_prints(tmp_path):
    if not PY39.exists():
        setup_missing("no .venvs/triton-3.9: run scripts/setup.sh")
    bundle = tmp_path / "v39.irscope"
    run_irscope("run", SCRIPT, "-o", bundle, "-q", "--no-open", "--python", PY39, "--", "ok", check=True)
    cap = irscope.open(str(bundle)).captures()[0]
    assert cap.triton_version.startswith("3.9")
    code, printed = _direct(str(PY39), "ok", tmp_path)
    assert code == 0 and printed
    assert cap.remarks().available and _stored(cap) == printed


@pytest.mark.slow
@pytest.mark.parametrize("version", ["3.2", "3.0"])
def test_older_triton_says_not_available(tmp_path, version):
    python = VENVS / f"triton-{version}" / "bin" / "python"
    if not python.exists():
        setup_missing(f"no .venvs/triton-{version}: run scripts/setup.sh")
    bundle = tmp_path / "old.irscope"
    run_irscope("run", SAMPLES / "vector_add.py", "-o", bundle, "-q", "--no-open", "--python", python, check=True)
    cap = irscope.open(str(bundle)).captures()[0]
    rs = cap.remarks()
    assert not rs.available and len(rs) == 0
    assert "not available" in (rs.why_not or "") and version in (rs.why_not or "")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["vector_add_exact.irscope"])
def test_a_bundle_from_before_remarks(tmp_path, name):
    """A bundle made before remarks were kept reads with none, and says why; adding a capture
    upgrades it to hold them."""
    copy = tmp_path / name
    shutil.copy(DATA / name, copy)
    cap = irscope.open(str(copy)).captures()[0]
    rs = cap.remarks()
    assert not rs.available and "did not record" in (rs.why_not or "")
    run_irscope("run", SCRIPT, "-o", copy, "-q", "--no-open", "--", "ok", check=True)
    caps = irscope.open(str(copy)).captures()
    assert not caps[0].remarks().available and caps[-1].remarks().available and len(caps[-1].remarks()) > 0
    con = sqlite3.connect(copy)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_parse_diagnostics_notes_and_call_sites():
    """The parser on MLIR's rendering: snippets and carets skipped, a ``called from``
    note as a call site, any other note kept with its remark, the stage and pass kept."""
    printed = [
        "/k.py:7:19: remark: MMA version 3 acceleration not applied due to unsupported shapes or data types.",
        "    c = tl.dot(a, b)",
        "                  ^",
        "/k.py:7:19: note: Target compute capability (90) supports MMA v3.",
        "/k.py:13:28: note: called from",
        "<unknown>:0: error: [bold]failed[/bold]",
        "/x/knobs.py:504: UserWarning: not a diagnostic",
    ]
    out = parse_diagnostics((ln, "ttgir", "TritonGPUAccelerateMatmul") for ln in printed)
    assert [(r.line, r.severity) for r in out] == [(7, "remark"), (0, "error")]
    assert out[0].notes == ("Target compute capability (90) supports MMA v3.",)
    assert out[0].called_from == (("/k.py", 13, 28),)
    assert out[0].pass_name == "TritonGPUAccelerateMatmul" and out[0].stage == "ttgir"
    assert out[1].file == "<unknown>" and out[1].text == "[bold]failed[/bold]"
