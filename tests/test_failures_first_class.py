"""Failures are first-class: what the core says about a failed capture, the app's error
panel and its jump key, the browser's status column at every width, and the command
line's one-line errors (report into a folder it cannot write, compile of a kernel that
does not exist, a ptxas `fatal` error). Real captures only: tests/data/learner_sm90.irscope
(frontend_kernel: a frontend NameError; ptxas_kernel: a ptxas error) and, marked slow, a
compile that ptxas refuses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from irscope.compiler.failure_text import meaningful_line, telling_lines
from irscope.core import open_bundle
from irscope.tui.app import make_app
from irscope.tui.screens.kernel import KernelScreen
from irscope.tui.widgets.error_panel import ErrorPanel
from irscope.tui.widgets.ir_view import IRView
from irscope.tui.widgets.kernel_table import CaptureTable

from conftest import DATA, SAMPLES, irscope
from setup_guard import setup_missing
from tui_support import run_async

LEARNER = DATA / "learner_sm90.irscope"
ROOT = Path(__file__).resolve().parent.parent
BAD = ROOT / "tests" / "kernels_failing" / "bad_kernels.py"
UNDEFINED_LINE = next(i for i, ln in enumerate(BAD.read_text().splitlines(), 1) if "undefined_name)" in ln)


@pytest.fixture(scope="module")
def learner():
    with open_bundle(str(LEARNER)) as b:
        yield b


# -- the core's facts ------------------------------------------------------------------

def test_frontend_failure_names_the_users_line(learner):
    f = learner.capture("frontend_kernel").failure
    assert f is not None and f.stage == "frontend" and f.pass_name is None
    assert f.line == UNDEFINED_LINE == 15 and f.where == "bad_kernels.py:15"
    assert f.file is not None and f.file.endswith("bad_kernels.py")
    # the snippet and the reason, not Triton's "at 4:31:" nor the traceback
    assert f.lines[-1] == "NameError('undefined_name is not defined')"
    assert any("undefined_name" in ln and "tl.store" in ln for ln in f.lines)
    assert not any(ln.startswith(("at ", "Traceback", "  File")) for ln in f.lines)
    # Triton's caret points at the column the core reports
    caret = next(ln for ln in f.lines if ln.strip() == "^")
    assert caret.index("^") + 1 == f.column
    assert "the frontend" in f.failed_in


def test_ptxas_failure_names_the_ptx_line(learner):
    cap = learner.capture("ptxas_kernel")
    f = cap.failure
    assert f is not None and f.stage == "cubin" and f.line is None and f.where is None
    assert f.ptx_line == 39 and "bogus" in cap.stage("ptx").text.splitlines()[38]
    assert f.lines == tuple(ln for ln in f.lines if "Repro command" not in ln and "aborted" not in ln)
    assert any("Not a name of any known instruction: 'bogus'" in ln for ln in f.lines)
    assert "cubin" in f.failed_in


def test_a_capture_that_compiled_has_no_failure(learner):
    assert learner.capture("rmsnorm_kernel").failure is None


def test_the_ptxas_fatal_line_is_the_cause_not_the_repro_command(learner):
    # The text Triton 3.2 wraps around a ptxas that rejects the target (docs/coverage.md)
    # has no `error` line: the `fatal` line is the cause.
    text = ("Internal Triton PTX codegen error\n`ptxas` stderr:\n"
            "ptxas fatal   : Value 'sm_100' is not defined for option 'gpu-name'\n\n"
            "Repro command: /x/ptxas -lineinfo -v --gpu-name=sm_100 /tmp/a.ptx -o /tmp/a.ptx.o\n")
    assert meaningful_line(text) == "ptxas fatal: Value 'sm_100' is not defined for option 'gpu-name'"
    assert telling_lines(text) == ("ptxas fatal   : Value 'sm_100' is not defined for option 'gpu-name'",)
    # after an `error` line, the fatal line only says ptxas stopped: the error stays the cause
    detail = learner.capture("ptxas_kernel").stage("error").text
    assert meaningful_line(detail) == "PTX line 39: Not a name of any known instruction: 'bogus'"


@pytest.mark.slow
def test_ptxas_fatal_of_a_real_compile_is_the_one_line_error(tmp_path):
    python = ROOT / ".venvs" / "triton-3.2" / "bin" / "python"
    if not python.exists():
        setup_missing("needs .venvs/triton-3.2 (its ptxas knows no sm_100)")
    out = tmp_path / "fatal.irscope"
    p = irscope("compile", f"{SAMPLES / 'vector_add.py'}::add_kernel", "--signature", "*fp32,*fp32,*fp32,i32",
                "--constexpr", "BLOCK_SIZE=64", "--python", python, "--target", "sm_100", "-o", out)
    assert p.returncode == 4, p.stderr
    (line,) = [ln for ln in p.stderr.splitlines() if ln.startswith("irscope: error:")]
    assert "ptxas fatal: Value 'sm_100' is not defined for option 'gpu-name'" in line
    assert "Repro command" not in line
    (cap,) = json.loads(irscope("ls", out, "--json", check=True).stdout)
    assert cap["failed_stage"] == "cubin" and "ptxas fatal" in cap["error"] and "Repro" not in cap["error"]
    with open_bundle(str(out)) as b:
        f = b.captures()[0].failure
        assert f is not None and f.lines == ("ptxas fatal   : Value 'sm_100' is not defined for option 'gpu-name'",)


# -- the app ---------------------------------------------------------------------------

async def _settle(pilot) -> None:
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def _panel_text(screen) -> str:
    return str(screen.query_one("#error-text").render())


@run_async
async def test_app_frontend_error_panel_and_jump_to_the_users_line():
    app = make_app(LEARNER, kernel="frontend_kernel", keymap={})
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(pilot)
        screen = app.screen
        assert isinstance(screen, KernelScreen)
        panel = screen.query_one(ErrorPanel)
        assert panel.display and panel.has_class("-alone")  # no stage compiled: it takes the pane
        assert not screen.query_one("#stage-tabs").display
        text = _panel_text(screen)
        assert "NameError('undefined_name is not defined')" in text
        assert "frontend" in text and "bad_kernels.py:15" in text
        assert panel.border_subtitle == "e: go to bad_kernels.py:15 in the Python pane"
        source = screen.query_one("#source", IRView)
        source.goto_line(0)
        await pilot.press("e")
        await _settle(pilot)
        assert screen.first_line + source.cursor_line == 15
        assert "undefined_name" in source.line_text(source.cursor_line)
        assert screen.python_line == 15


@run_async
async def test_app_ptxas_error_panel_and_jump_to_the_ptx_line():
    app = make_app(LEARNER, kernel="ptxas_kernel", keymap={})
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(pilot)
        screen = app.screen
        panel = screen.query_one(ErrorPanel)
        assert panel.display and not panel.has_class("-alone")  # above the stages that compiled
        assert screen.query_one("#stage-tabs").display
        text = _panel_text(screen)
        assert "PTX line 39: Not a name of any known instruction: 'bogus'" in text
        assert "cubin" in text and "Repro command" not in text
        assert panel.border_subtitle == "e: go to PTX line 39"
        await pilot.press("e")
        await _settle(pilot)
        stage = screen.query_one("#stage", IRView)
        assert screen.stage == "ptx" and stage.cursor_line == 38
        assert "bogus" in stage.line_text(38)


@run_async
async def test_app_kernel_that_compiled_has_no_error_panel():
    app = make_app(LEARNER, kernel="rmsnorm_kernel", keymap={})
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(pilot)
        assert not app.screen.query(ErrorPanel)
        await pilot.press("e")  # says so, changes nothing
        await _settle(pilot)
        assert isinstance(app.screen, KernelScreen)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
@run_async
async def test_browser_status_column_is_visible_at_every_width(size):
    app = make_app(LEARNER, keymap={})
    async with app.run_test(size=size) as pilot:
        await _settle(pilot)
        table = app.screen.query_one(CaptureTable)
        assert table.virtual_size.width > table.size.width  # the columns do not all fit
        lines = [table.render_line(y).text for y in range(table.row_count + 1)]
        assert lines[0].rstrip().endswith("status")
        shown = {ln.split()[1 if ln.split()[0].isdigit() else 0]: ln.rstrip() for ln in lines[1:]}
        assert shown["frontend_kernel"].endswith("failed (frontend)")
        assert shown["ptxas_kernel"].endswith("failed (cubin)")
        assert shown["rmsnorm_kernel"].endswith("ok")
        # scrolled sideways to the end, the status stays put and nothing is cut twice
        table.scroll_to(x=table.max_scroll_x, animate=False, immediate=True)
        await pilot.pause()
        lines = [table.render_line(y).text for y in range(table.row_count + 1)]
        assert lines[0].rstrip().endswith("status") and "compile" in lines[0]
        assert all(len(ln) == table.size.width for ln in lines)


# -- the command line ------------------------------------------------------------------

def test_report_into_a_folder_it_cannot_write_is_one_line(tmp_path):
    # Tests run as root, where a read-only mode does not stop a write: /proc refuses any
    # new entry, for root too.
    target = "/proc/irscope-report-test"
    p = irscope("report", DATA / "vector_add_exact.irscope", "-o", target, "--no-pictures", "-q")
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines() == [p.stderr.strip()]
    assert p.stderr.startswith(f"irscope: error: cannot write the report to {target}")


def test_compile_of_a_missing_kernel_is_one_line_and_adds_no_run(tmp_path):
    bundle = tmp_path / "b.irscope"
    shutil.copy(LEARNER, bundle)
    runs = len(json.loads(irscope("ls", bundle, "--runs", "--json", check=True).stdout))
    p = irscope("compile", f"{BAD}::frontend_kernl", "--signature", "x_ptr:*i32", "-o", bundle)
    assert p.returncode != 0
    assert p.stderr.strip() == (f"irscope: error: {BAD} has no kernel named 'frontend_kernl' "
                                f"(did you mean frontend_kernel?)")
    assert "SystemExit" not in p.stderr + p.stdout
    assert len(json.loads(irscope("ls", bundle, "--runs", "--json", check=True).stdout)) == runs


@run_async
async def test_pass_stepper_of_a_frontend_failure_says_why_it_has_no_passes():
    app = make_app(LEARNER, kernel="frontend_kernel", keymap={})
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(pilot)
        await pilot.press("p")
        await _settle(pilot)
        about = app.screen.query_one("#pass-about").text.plain
        assert "stages with pass snapshots: none" in about
        assert "failed in the frontend (Python to TTIR) before any pass ran" in about
        assert "NameError('undefined_name is not defined')" in about


@pytest.mark.slow
def test_compile_spec_that_misfits_the_kernel_is_one_line_and_adds_no_run(tmp_path):
    # The child finds it (the file is run to read the kernel's parameters): still one line,
    # no `SystemExit:`, nothing echoed besides it, and no run left in the bundle.
    bundle = tmp_path / "b.irscope"
    shutil.copy(LEARNER, bundle)
    runs = json.loads(irscope("ls", bundle, "--runs", "--json", check=True).stdout)
    p = irscope("compile", f"{BAD}::frontend_kernel", "--signature", "x_ptr:*i32,y:i32", "--constexpr", "BLOCK=128",
                "-o", bundle)
    assert p.returncode == 3
    assert p.stderr.strip() == "irscope: error: frontend_kernel has no parameter y (it has: x_ptr, BLOCK)"
    assert json.loads(irscope("ls", bundle, "--runs", "--json", check=True).stdout) == runs
