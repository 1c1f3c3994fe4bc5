"""Every view of a profile shows the same figures, because each reads them from the
core once (:func:`irscope.core.profile.profile_of`): ``irscope hot --json``, the app's
heat columns (the Python pane's per line, a stage pane's per stage line), the report's
"where the time goes" table and its stages' top ops, and ``irscope diff --json``'s
per-line sample change between two profiled captures. On real H200 profiles (the
shared ``profiled`` fixture), Nsight Compute's and Proton's."""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

import pytest

from irscope.export.report.build import build_report
from irscope.tui.app import make_app
from irscope.tui.widgets.ir_view import IRView
from irscope.tui.widgets.python_pane import PythonPane

from conftest import irscope
from tui_support import run_async, settle

CASES = [("jit_helper_call", "ncu"), ("fused_softmax", "ncu"), ("layer_norm", "proton")]
STAGES = ("ttir", "ttgir", "sass")


def _hot(path: Path, kernel: str, stage: str = "sass") -> dict:
    return json.loads(irscope("hot", path, kernel, "--stage", stage, "--json", check=True).stdout)


def _lines(hot: dict) -> dict[tuple[str, int], int]:
    return {(os.path.basename(ln["file"]), ln["line"]): ln["samples"] for ln in hot["lines"]}


async def _app_figures(path: Path, kernel: str) -> tuple[dict[tuple[str, int], int], dict[str, dict[int, float]]]:
    """The app's Python column (file base name, line) -> samples, and each stage
    pane's column (1-based stage line -> samples) for :data:`STAGES`."""
    app = make_app(path, keymap={}, kernel=kernel)
    async with app.run_test(size=(130, 44)) as pilot:
        for _ in range(2):
            await settle(pilot)
        screen = app.screen
        pane = screen.query_one("#source", PythonPane)
        assert pane.heat_shown
        lines = {}
        for y in range(pane.line_count):
            r = pane.row(y)
            if r.line is not None and pane.heat_at(y):
                lines[(os.path.basename(pane._row_file(r) or ""), r.line)] = int(pane.heat_at(y))
        stages = {}
        view = screen.query_one("#stage", IRView)
        for stage in STAGES:
            screen.select_stage(stage)
            for _ in range(2):
                await settle(pilot)
            assert view.heat_shown, stage
            stages[stage] = {y + 1: view.heat_at(y) for y in range(view.line_count) if view.heat_at(y)}
    return lines, stages


def _report_figures(path: Path, out: Path) -> tuple[dict[tuple[str, int], int], dict[str, list[tuple[int, float]]]]:
    build_report([str(path)], str(out), command="irscope report X -o report", pictures=False)
    page = next(out.glob("kernel-*.html")).read_text(encoding="utf-8")
    section = page[page.index('<section id="heat">'):]
    table = section[section.index('id="heat-lines"'):]
    table = table[:table.index("</table>")]
    lines = {(os.path.basename(html.unescape(m.group(2))), int(m.group(1))): int(m.group(3))
             for m in re.finditer(r'<tr data-line="(\d+)" data-file="([^"]*)" data-samples="(\d+)">', table)}
    ops = {}
    for stage in STAGES:
        part = section[section.index(f'<div class="heat-stage" data-stage="{stage}">'):]
        part = part[:part.index("</table>")]
        ops[stage] = [(int(a), float(b)) for a, b in
                      re.findall(r'<tr data-stage-line="(\d+)"><td>\d+</td><td>([\d.]+)</td>', part)]
    return lines, ops


@pytest.mark.parametrize("name,tool", CASES)
@run_async
async def test_hot_json_app_and_report_show_the_same_samples(profiled, tmp_path, name, tool):
    pb = profiled.ncu(name) if tool == "ncu" else profiled.proton(name)
    hot = {stage: _hot(pb.path, pb.kernel, stage) for stage in STAGES}
    want = _lines(hot["sass"])
    assert sum(want.values()) + hot["sass"]["unattributed"] == hot["sass"]["total_samples"]
    app_lines, app_stages = await _app_figures(pb.path, pb.kernel)
    report_lines, report_ops = _report_figures(pb.path, tmp_path / "report")
    assert app_lines == want
    assert report_lines == want
    for stage in STAGES:
        ops = hot[stage]["ops"]
        assert app_stages[stage] == pytest.approx({o["stage_line"]: o["samples"] for o in ops}), stage
        shown = report_ops[stage]
        assert shown and shown == pytest.approx([(o["stage_line"], o["samples"]) for o in ops[:len(shown)]],
                                                 abs=0.005), stage


def test_diff_json_sample_change_is_each_side_hot_json(profiled):
    pb = profiled.ncu("flash_attention")  # STAGE=1 and STAGE=3, each with its own launch's profile
    a, b = f"{pb.path}:{pb.kernel}#0", f"{pb.path}:{pb.kernel}#1"
    diff = json.loads(irscope("diff", a, b, "--json", check=True).stdout)
    got = diff["heat"]
    want_a = json.loads(irscope("hot", pb.path, pb.kernel, "--variant", "0", "--json", check=True).stdout)
    want_b = json.loads(irscope("hot", pb.path, pb.kernel, "--variant", "1", "--json", check=True).stdout)
    assert (got["total_before"], got["total_after"]) == (want_a["total_samples"], want_b["total_samples"])
    assert (got["unattributed_before"], got["unattributed_after"]) == (want_a["unattributed"], want_b["unattributed"])
    before = {(os.path.basename(ln["file"]), ln["line"]): ln["before"] for ln in got["lines"] if ln["before"]}
    after = {(os.path.basename(ln["file"]), ln["line"]): ln["after"] for ln in got["lines"] if ln["after"]}
    assert before == _lines(want_a) and after == _lines(want_b)
    # a line whose statement's ops changed carries that change (the IR change beside the samples)
    changed = {ln["line"]: ln["counts"] for ln in diff["lines"]}
    both = [ln for ln in got["lines"] if ln["line"] in changed]
    assert both
    for ln in both:
        assert ln["ops"] == changed[ln["line"]], ln["line"]


def test_diff_line_keeps_the_statement_samples(profiled):
    pb = profiled.ncu("flash_attention")
    a, b = f"{pb.path}:{pb.kernel}#0", f"{pb.path}:{pb.kernel}#1"
    every = json.loads(irscope("diff", a, b, "--stage", "ttgir", "--json", check=True).stdout)["heat"]["lines"]
    line = max(every, key=lambda ln: ln["before"])["line"]  # the hottest line of side A
    got = json.loads(irscope("diff", a, b, "--stage", "ttgir", "--line", str(line), "--json",
                             check=True).stdout)["heat"]["lines"]
    assert [ln["line"] for ln in got] == [line]
    assert got == [ln for ln in every if ln["line"] == line]
