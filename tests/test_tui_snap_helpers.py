"""The kernel view's Python pane with @triton.jit helpers (tests/data/learner_sm90.irscope's
RMSNorm): each helper in its own section, a helper line marks its ops like a kernel line,
``c`` charges the helpers' ops to the kernel's call line; the pane agrees with the core
(irscope.core.user_functions). A Pilot test and an SVG snapshot (pytest-textual-snapshot:
update with ``pytest tests/test_tui_snap_helpers.py --snapshot-update``, then look)."""

from __future__ import annotations

from textual.widgets import Input

from irscope.core import open_bundle
from irscope.core.user_functions import CALL_LINE, OWN, function_line_ops, user_functions
from irscope.tui.app import make_app
from irscope.tui.screens.kernel import KernelScreen
from irscope.tui.widgets.ir_view import IRView
from irscope.tui.widgets.python_pane import PythonPane
from irscope.tui.widgets.stage_tabs import StageTabs

from conftest import DATA
from tui_support import run_async

LEARNER = DATA / "learner_sm90.irscope"
SIZE = (120, 40)


async def _settle(pilot) -> None:
    for _ in range(4):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    for inp in pilot.app.screen.query(Input):
        inp.cursor_blink = False


def _row(pane: PythonPane, starts: str) -> int:
    return next(i for i in range(pane.line_count) if pane.line_text(i).lstrip().startswith(starts))


@run_async
async def test_helper_sections_select_and_charge_like_the_core():
    app = make_app(LEARNER, keymap={}, kernel="rmsnorm_kernel")
    with open_bundle(str(LEARNER)) as b:
        cap = b.capture("rmsnorm_kernel")
        own, charged = user_functions(cap, OWN), user_functions(cap, CALL_LINE)
        async with app.run_test(size=SIZE) as pilot:
            await _settle(pilot)
            screen = app.screen
            assert isinstance(screen, KernelScreen)
            pane = screen.query_one("#source", PythonPane)
            text = [pane.line_text(i) for i in range(pane.line_count)]
            # the kernel first (rows as before), then one headed section per helper
            assert text[0].startswith("def rmsnorm_kernel(") and pane.row(0).line == own.kernel.first_line
            for fn in own.helpers:
                head = _row(pane, f"# ── helper {fn.name} ")
                assert f"rmsnorm_helpers.py:{fn.first_line}-{fn.last_line}  called at 27" in text[head]
                assert text[head + 1].startswith(f"def {fn.name}(") and pane.row(head + 1).line == fn.first_line
            # a helper line: its ops marked in the stage pane, the tab counts are the core's
            mean = own.helpers[0]
            pane.focus()
            pane.goto_line(_row(pane, "return tl.sum("))
            await _settle(pilot)
            tabs = screen.query_one(StageTabs)
            for stage in screen.stages:
                if stage in own.stages:
                    assert tabs.count(stage) == mean.count(13, stage), stage
            view = screen.query_one("#stage", IRView)
            assert len(view.marks) == mean.count(13, screen.stage) > 0
            assert "_mean_square line 13" in str(screen.query_one("#stage-status").text)
            # the call line, then c: its count grows by the helpers' ops
            call = own.helpers[0].call_lines[0]
            pane.goto_line(call - own.kernel.first_line)
            await _settle(pilot)
            assert tabs.count("ttgir") == own.kernel.count(call, "ttgir")
            await pilot.press("c")
            await _settle(pilot)
            assert pane.charge == CALL_LINE
            assert tabs.count("ttgir") == charged.kernel.count(call, "ttgir") > own.kernel.count(call, "ttgir")
            assert "helper ops: call line (c)" in str(screen.query_one("#stage-status").text)
            pane.goto_line(_row(pane, "return tl.sum("))
            await _settle(pilot)
            assert tabs.count("ttgir") == 0
            await pilot.press("c")
            await _settle(pilot)
            assert pane.charge == OWN and tabs.count("ttgir") == mean.count(13, "ttgir")
            # a jump from a helper's op in the stage pane lands on the helper's line
            pane.goto_line(0)
            await _settle(pilot)
            op = function_line_ops(cap, own.helpers[1], 18)["ttgir"][0]
            screen.jump_to("ttgir", op.line)
            await _settle(pilot)
            assert pane.function() is not None and pane.function().name == "_rsqrt_eps" and pane.row().line == 18
            # reopened, the capture's sections are there at once, and the cursor is back on the helper line
            while isinstance(app.screen, KernelScreen):  # the op's details close first
                await pilot.press("escape")
                await _settle(pilot)
            app.open_capture(screen.capture)
            await pilot.pause()
            again = app.screen.query_one("#source", PythonPane)
            assert again is not pane and [h.name for h in again.helpers] == ["_mean_square", "_rsqrt_eps"]
            await _settle(pilot)
            assert again.row().line == 18 and again.function().name == "_rsqrt_eps"


async def _on_helper_line(pilot) -> None:
    await _settle(pilot)
    pane = pilot.app.screen.query_one("#source", PythonPane)
    pane.focus()
    pane.goto_line(_row(pane, "return tl.sum("))
    await _settle(pilot)


def test_snapshot_kernel_view_with_helper_sections(snap_compare):
    app = make_app(LEARNER, keymap={}, kernel="rmsnorm_kernel")
    assert snap_compare(app, terminal_size=SIZE, run_before=_on_helper_line)
