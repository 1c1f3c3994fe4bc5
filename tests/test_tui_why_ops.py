"""A ``ttg.convert_layout`` and an ``scf.for`` of the TTGIR pane show, in the op-details
panel, the conversion's and the loop's facts as ``irscope explain --json`` gives them
(``conversions`` and ``loops``, matched by ``ttgir_line``): the core computes them once,
the panel only prints them. Pilot tests on tests/data/why_conversions.irscope and
why_loops.irscope, and an SVG snapshot (pytest-textual-snapshot: update with
``pytest tests/test_tui_why_ops.py --snapshot-update``, then look)."""

from __future__ import annotations

import json
from pathlib import Path

from irscope.tui.app import make_app
from irscope.tui.screens.kernel import KernelScreen
from irscope.tui.widgets.ir_view import IRView
from irscope.tui.widgets.op_details import OpDetails

from conftest import DATA, irscope
from tui_support import run_async, settle as _settle

CONVERSIONS = DATA / "why_conversions.irscope"
LOOPS = DATA / "why_loops.irscope"
SIZE = (120, 50)


def _explain_json(bundle: Path, kernel: str, target: str, variant: int = 0) -> dict:
    p = irscope("explain", bundle, kernel, "--target", target, "--variant", str(variant), "--json", check=True)
    return json.loads(p.stdout)


async def _details_at(pilot, ttgir_line: int) -> str:
    """Show the TTGIR, put its cursor on ``ttgir_line`` (1-based), open the op's details;
    the panel's text."""
    await _settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, KernelScreen)
    if screen.stage != "ttgir":
        await pilot.press("t")  # the next stage tab: TTIR to TTGIR
        await _settle(pilot)
    assert screen.stage == "ttgir"
    view = screen.query_one("#stage", IRView)
    view.focus()
    view.goto_line(ttgir_line - 1)
    await pilot.press("enter")
    await _settle(pilot)
    panel = screen.query_one(OpDetails)
    assert panel.shown
    assert screen._detail.line == ttgir_line
    return str(panel.query_one("#op-details-body").render())


@run_async
async def test_convert_layout_details_show_explain_json_conversion():
    want = _explain_json(CONVERSIONS, "transpose_kernel", "sm_90")
    [conv] = want["conversions"]
    assert conv["via"] == "shared_memory" and conv["scratch_bytes"] > 0 and conv["triton_allocated"] is True
    app = make_app(CONVERSIONS, keymap={}, kernel="transpose_kernel", target="sm_90")
    async with app.run_test(size=SIZE) as pilot:
        text = await _details_at(pilot, conv["ttgir_line"])
        assert app.screen._detail.name == "ttg.convert_layout"
        assert f"conversion: via {conv['via'].replace('_', ' ')}, {conv['scratch_bytes']} B scratch, " \
               f"{conv['bank_conflicts']}-way bank conflicts" in text
        assert conv["source"] in text and conv["destination"] in text
        assert " then ".join(conv["instructions"]) in text
        assert "scratch memory given (allocation.offset)" in text
        # an op that is neither a conversion nor a loop shows no such facts
        view = app.screen.query_one("#stage", IRView)
        load = next(i for i in range(view.line_count) if " = tt.load " in view.line_text(i))
        text = await _details_at(pilot, load + 1)
        assert app.screen._detail.name == "tt.load"
        assert "conversion:" not in text and "loop:" not in text


@run_async
async def test_register_conversion_details_say_registers():
    want = _explain_json(CONVERSIONS, "row_sums_kernel", "sm_90", variant=3)
    convs = [c for c in want["conversions"] if c["via"] != "shared_memory"]
    assert convs
    conv = convs[0]
    app = make_app(CONVERSIONS, keymap={}, kernel="row_sums_kernel", target="sm_90", variant=3)
    async with app.run_test(size=SIZE) as pilot:
        text = await _details_at(pilot, conv["ttgir_line"])
        assert f"conversion: via {conv['via'].replace('_', ' ')}\n" in text
        assert "B scratch" not in text and "bank conflicts" not in text


@run_async
async def test_scf_for_details_show_explain_json_loop():
    for variant in (0, 1):  # num_stages=3: pipelined; num_stages=1: not
        want = _explain_json(LOOPS, "gemm_kernel", "sm_80", variant)
        [loop] = want["loops"]
        assert loop["pipelined"] is (variant == 0)
        app = make_app(LOOPS, keymap={}, kernel="gemm_kernel", target="sm_80", variant=variant)
        async with app.run_test(size=SIZE) as pilot:
            text = await _details_at(pilot, loop["ttgir_line"])
            assert app.screen._detail.name == "scf.for"
            if loop["pipelined"]:
                assert f"loop: python line {loop['line']}, pipelined, {loop['stages']} stages, " \
                       f"{loop['async_loads']} of {loop['loads']} loads async" in text
                steady = loop["schedule"]["steady"]
                assert steady and all(f"stage {s['stage']}: " + ", ".join(s["ops"]) in text for s in steady)
                assert "epilogue: " + ", ".join(loop["schedule"]["epilogue"]) in text
            else:
                assert f"loop: python line {loop['line']}, not pipelined ({loop['loads']} loads)" in text
                assert "prologue:" not in text
            assert f"stages asked for: {loop['requested_stages']}" in text
            assert loop["evidence"] in text


@run_async
async def test_scf_for_details_show_the_loops_remark():
    want = _explain_json(LOOPS, "strided_rowsum_kernel", "sm_80")
    [loop] = want["loops"]
    assert loop["remark"]
    app = make_app(LOOPS, keymap={}, kernel="strided_rowsum_kernel", target="sm_80")
    async with app.run_test(size=SIZE) as pilot:
        text = await _details_at(pilot, loop["ttgir_line"])
        assert f"remark: {loop['remark']}" in text
        assert ("pipelined, " if loop["pipelined"] else "not pipelined") in text


async def _on_conversion_details(pilot) -> None:
    want = _explain_json(CONVERSIONS, "transpose_kernel", "sm_90")
    await _details_at(pilot, want["conversions"][0]["ttgir_line"])


def test_snapshot_convert_layout_details(snap_compare):
    app = make_app(CONVERSIONS, keymap={}, kernel="transpose_kernel", target="sm_90")
    assert snap_compare(app, terminal_size=SIZE, run_before=_on_conversion_details)
