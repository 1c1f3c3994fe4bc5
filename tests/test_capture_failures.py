"""Failures are never lost nor reported as success: native compiler crashes, a child
killed by a signal, irscope itself killed, Ctrl-C, ptxas and frontend errors, runs
that capture nothing, compile-only result checks (real Triton compiles, no GPU)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLES, VECTOR_ADD, irscope, ls_json, write_script

KERNELS = Path(__file__).resolve().parent / "kernels_failing"


def _runs(bundle):
    return json.loads(irscope("ls", bundle, "--runs", "--json", check=True).stdout)


def _error_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("irscope: error:")]


def _line_of(path: Path, text: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if text in ln)


# -- a native crash (LLVM aborts the child) ---------------------------------------

@pytest.fixture(scope="module")
def crash_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("crash") / "crash.irscope"
    p = irscope("run", KERNELS / "crash_asm.py", "-o", out)
    return p, out


@pytest.mark.slow
def test_native_crash_gives_a_failed_capture_with_its_stages(crash_run):
    p, out = crash_run
    assert p.returncode != 0 and "Traceback" not in p.stderr
    caps = {c["kernel"]: c for c in ls_json(out)}
    assert caps["add_kernel"]["error"] is None  # the kernel finished before is kept
    crash = caps["crash_kernel"]
    assert {"ttir", "ttgir"} <= set(crash["stages"]) and "ptx" not in crash["stages"]
    assert crash["failed_stage"] == "llir" and crash["failed_pass"]  # the stage and pass that were running
    assert "SIGABRT" in crash["error"] and "number of input constraints" in crash["error"]
    assert "UNREACHABLE" in crash["error_detail"]  # the native text, as the child wrote it to stderr
    (line,) = _error_lines(p.stderr)
    assert "crash_kernel" in line and "SIGABRT" in line
    (run,) = _runs(out)
    assert run["complete"] is False and "SIGABRT" in run["status"]
    detail = irscope("cat", out, "crash_kernel", "--stage", "error", check=True).stdout
    assert "number of input constraints does not match number of parameters" in detail


# -- a child killed by a signal ---------------------------------------------------

@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM"])
def test_child_killed_by_a_signal_is_an_incomplete_run(tmp_path, sig):
    out = tmp_path / "k.irscope"
    env = dict(os.environ, KILL_WITH=sig)
    p = irscope("run", KERNELS / "kill_self.py", "-o", out, env=env)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    (line,) = _error_lines(p.stderr)
    assert sig in line and "the script was" in line and "(gpu)" not in line


def test_compile_killed_is_worded_about_a_compile(tmp_path):
    p = irscope("compile", f"{KERNELS / 'kill_self.py'}::never_compiled", "--signature", "x_ptr:*fp32",
                "-o", tmp_path / "c.irscope", env=dict(os.environ, KILL_WITH="SIGKILL"))
    assert p.returncode != 0
    (line,) = _error_lines(p.stderr)
    assert "the compile was killed by SIGKILL" in line and "script" not in line


# -- a crash after the script ended (the interpreter's shutdown) -------------------

ABORT_AT_EXIT = VECTOR_ADD + '''
import atexit, os
atexit.register(os.abort)  # as a native thread left running can end Python on its way out
x = torch.randn(1024, device=DEVICE)
add_kernel[(1,)](x, x, x, 1024, BLOCK=1024)
'''


@pytest.mark.slow
def test_a_crash_while_python_shuts_down_loses_nothing(tmp_path):
    out = tmp_path / "a.irscope"
    p = irscope("run", write_script(tmp_path, "abort_at_exit.py", ABORT_AT_EXIT), "--target", "sm_90", "-o", out)
    assert p.returncode == 0, p.stderr
    said = " ".join((p.stdout + p.stderr).split())
    assert "ran to its end (sm_90), then Python crashed with SIGABRT while shutting down" in said
    assert [c["kernel"] for c in ls_json(out)] == ["add_kernel"]
    (run,) = _runs(out)
    assert run["complete"] is True and run["status"] == "ok"


def test_a_crash_before_the_script_ends_is_still_a_crash(tmp_path):
    p = irscope("run", KERNELS / "kill_self.py", "-o", tmp_path / "k.irscope", env=dict(os.environ, KILL_WITH="SIGABRT"))
    assert p.returncode != 0
    (line,) = _error_lines(p.stderr)
    assert "crashed with SIGABRT" in line and "shutting down" not in line


# -- irscope killed with kill -9 ----------------------------------------------------

def _dead(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return any(ln.startswith("State:") and "Z" in ln.split()[1] for ln in f)  # a zombie is dead
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("watch", ["", "thread"], ids=["pdeathsig", "watcher-thread"])
def test_child_dies_with_a_killed_parent_and_its_spool_is_cleaned(tmp_path, watch):
    spools = tmp_path / "tmp"
    spools.mkdir()
    pid_file = tmp_path / "child.pid"
    env = dict(os.environ, TMPDIR=str(spools), HANG_NO_KERNEL="1", IRSCOPE_PARENT_WATCH=watch)
    parent = subprocess.Popen([sys.executable, "-m", "irscope", "run", str(KERNELS / "hang.py"), "-o",
                               str(tmp_path / "h.irscope"), "-q", "--", str(pid_file)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while not pid_file.exists() and time.time() < deadline and parent.poll() is None:
            time.sleep(0.05)
        child = int(pid_file.read_text())
        left = [p for p in spools.iterdir() if p.name.startswith(f"irscope-spool-{parent.pid}-")]
        assert len(left) == 1
        parent.kill()
        parent.wait()
        deadline = time.time() + 3
        while not _dead(child) and time.time() < deadline:
            time.sleep(0.05)
        assert _dead(child), "the child outlived irscope"
        assert left[0].exists()  # nobody cleaned up after irscope: the next run does
        script = write_script(tmp_path, "nothing.py", "print('no kernels here')\n")
        irscope("run", script, "-o", tmp_path / "n.irscope", env=dict(os.environ, TMPDIR=str(spools)))
        assert not left[0].exists()
    finally:
        if parent.poll() is None:
            parent.kill()


# -- Ctrl-C ------------------------------------------------------------------------

@pytest.mark.slow
def test_ctrl_c_exits_within_two_seconds_keeping_finished_kernels(tmp_path):
    pid_file = tmp_path / "child.pid"
    out = tmp_path / "i.irscope"
    # Its own session, as a terminal job: the terminal's Ctrl-C is SIGINT to the job's group.
    job = subprocess.Popen([sys.executable, "-m", "irscope", "run", str(KERNELS / "hang.py"), "-o", str(out), "--",
                            str(pid_file)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 120
    while not pid_file.exists() and time.time() < deadline and job.poll() is None:
        time.sleep(0.05)
    child = int(pid_file.read_text())
    time.sleep(0.3)  # the child is stuck where SIGINT does nothing, like a native compile step
    t0 = time.perf_counter()
    os.killpg(job.pid, signal.SIGINT)
    _, err = job.communicate(timeout=30)
    elapsed = time.perf_counter() - t0
    assert job.returncode == 130, err
    assert elapsed <= 2.0, f"{elapsed:.2f} s from Ctrl-C to exit"
    assert _dead(child)
    assert [c["kernel"] for c in ls_json(out)] == ["add_kernel"]
    (run,) = _runs(out)
    assert run["status"] == "interrupted" and run["complete"] is False


# -- ptxas and frontend errors --------------------------------------------------------

@pytest.fixture(scope="module")
def bad_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bad") / "bad.irscope"
    p = irscope("run", KERNELS / "bad_kernels.py", "-o", out)
    return p, out, {c["kernel"]: c for c in ls_json(out)}


@pytest.mark.slow
def test_ptxas_failure_names_the_real_error(bad_run):
    p, out, caps = bad_run
    c = caps["ptxas_kernel"]
    assert c["failed_stage"] == "cubin"
    assert "Not a name of any known instruction: 'bogus'" in c["error"] and "Repro command" not in c["error"]
    assert "Repro command" in c["error_detail"]  # the full detail, in ls --json
    detail = irscope("cat", out, "ptxas_kernel", "--stage", "error", check=True).stdout
    assert "ptxas fatal" in detail and "Traceback" in detail
    # under the run's table: the message in full; Triton's PTX dump stays in the bundle
    assert "ptxas fatal   : Ptx assembly aborted due to errors" in p.stderr
    assert ".address_size 64" not in p.stdout + p.stderr and "please share the reproducer" not in p.stdout
    log = irscope("cat", out, "ptxas_kernel", "--stage", "log", check=True).stdout
    assert ".address_size 64" in log and "please share the reproducer" in log


@pytest.mark.slow
def test_frontend_error_names_file_and_line(bad_run):
    p, _, caps = bad_run
    line = _line_of(KERNELS / "bad_kernels.py", "x + undefined_name")
    c = caps["frontend_kernel"]
    assert c["failed_stage"] == "frontend" and f"bad_kernels.py:{line}" in c["error"]
    (err,) = _error_lines(p.stderr)
    assert f"bad_kernels.py:{line}" in err and "undefined_name" in err and p.returncode != 0


# -- nothing captured -----------------------------------------------------------------

def test_script_that_compiles_nothing_fails(tmp_path):
    script = write_script(tmp_path, "nothing.py", "print('no kernels here')\n")
    p = irscope("run", script, "-o", tmp_path / "n.irscope")
    assert p.returncode != 0 and "Traceback" not in p.stderr
    (line,) = _error_lines(p.stderr)
    assert "nothing captured" in line and "compiled no Triton kernel" in line
    assert not (tmp_path / "n.irscope").exists()


def test_python_that_runs_nothing_fails_and_is_not_labelled_gpu(tmp_path):
    script = write_script(tmp_path, "k.py", "print('hi')\n")
    p = irscope("run", script, "--python", "/bin/true", "-o", tmp_path / "t.irscope")
    assert p.returncode != 0
    (line,) = _error_lines(p.stderr)
    assert "/bin/true ran no script" in line and "(gpu)" not in line


# -- compile-only result checks --------------------------------------------------------

@pytest.fixture(scope="module")
def check_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("check") / "check.irscope"
    return irscope("run", KERNELS / "result_check.py", "-o", out), out


@pytest.mark.slow
def test_compile_only_result_check_is_expected(check_run):
    p, out = check_run
    assert p.returncode == 0, p.stderr
    assert "result check" in p.stderr and p.stderr.count("result check") == 1
    assert "note:" not in p.stderr and "script failed" not in p.stderr and "irscope: error" not in p.stderr
    (run,) = _runs(out)
    assert run["status"] == "compile-only, checks skipped" and run["complete"] is True
    assert p.stdout.splitlines()[0].strip() and p.stderr.splitlines()[0].strip()  # no blank first line


@pytest.mark.slow
def test_compile_only_result_check_strict_fails(tmp_path):
    p = irscope("run", KERNELS / "result_check.py", "-o", tmp_path / "s.irscope", "--strict")
    assert p.returncode != 0
    (line,) = _error_lines(p.stderr)
    assert "result_check.py" in line


@pytest.mark.slow
def test_sample_kernels_skip_their_check_compile_only(tmp_path):
    out = tmp_path / "v.irscope"
    p = irscope("run", SAMPLES / "vector_add.py", "-o", out)
    assert p.returncode == 0
    assert "vector_add: compile-only, numeric check skipped" in p.stdout + p.stderr
    assert "note:" not in p.stderr and _runs(out)[0]["status"] == "ok"


def test_samples_check_for_compile_only():
    for path in sorted(SAMPLES.glob("*.py")):
        assert 'os.environ.get("IRSCOPE_COMPILE_ONLY")' in path.read_text(), path.name


def test_no_blank_line_when_piped(tmp_path):
    script = write_script(tmp_path, "hello.py", "print('hello')\n")
    p = irscope("run", script, "-o", tmp_path / "b.irscope")
    lines = p.stderr.splitlines()
    assert lines[0] == "hello" and "" not in lines, p.stderr  # a stopped progress display left one
