"""The diff screen on two real matmul_kernel configs (Triton 3.6, sm_90), built through
the app factory, and ``irscope diff A B --tui`` run in-process."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import DataTable, TabbedContent

from irscope.cli import diff_cmd
from irscope.cli.main import main as cli_main
from irscope.core import open_bundle
from irscope.diff.compare import compare_captures
from irscope.tui.app import make_app
from irscope.tui.screens.diff import DiffScreen
from irscope.tui.widgets.diff_panes import nearest, pane_content
from irscope.tui.widgets.ir_view import IRView

from conftest import DATA
from tui_support import run_async

BUNDLE = DATA / "samples_sm90.irscope"
SIZE = (100, 30)
KINDS = {"added": "added", "removed": "removed", "changed": "changed", "moved": "linked"}


@pytest.fixture(scope="module")
def compared():
    with open_bundle(str(BUNDLE)) as b:
        a = b.capture("matmul_kernel", variant=0)
        c = b.capture("matmul_kernel", variant=1)
        cmp = compare_captures(a, c, a_label=a.title(), b_label=c.title())
        texts = {s: (a.stage(s).text, c.stage(s).text) for s in cmp.stages}
        yield cmp, texts


def diff_app(cmp, texts):
    app = make_app(BUNDLE, keymap={})

    async def _open(pilot):
        app.push_screen(DiffScreen(cmp, texts=texts))
        await pilot.pause()
    return app, _open


def cells(table: DataTable) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def stage_events(log):
    seen, out = set(), []
    for m in log:
        if isinstance(m, DiffScreen.StageShown) and id(m) not in seen:
            seen.add(id(m))
            out.append(m)
    return out


@run_async
async def test_summary_metadata_and_lines(compared):
    cmp, texts = compared
    app, open_ = diff_app(cmp, texts)
    async with app.run_test(size=SIZE) as pilot:
        await open_(pilot)
        screen = app.screen
        summary = cells(screen.query_one("#diff-summary", DataTable))
        assert [r[0] for r in summary] == list(cmp.stages)
        for row, (stage, d) in zip(summary, cmp.stages.items()):
            assert row[1:6] == [str(d.matched), str(d.added), str(d.removed), str(d.moved), str(d.changed)]
        sides = str(screen.query_one("#diff-sides").render())
        # the labels' common prefix is elided; what tells the configs apart stays
        assert "BLOCK_SIZE_N=256" in sides.split("\n")[0] and "BLOCK_SIZE_N=128" in sides.split("\n")[1]
        assert sides.startswith("A matmul_kernel […")
        # metadata: only the fields that differ, then every field with "a"
        meta = cells(screen.query_one("#diff-meta", DataTable))
        changed = [d for d in cmp.metadata if d.changed]
        assert [r[0] for r in meta] == [d.name for d in changed]
        warps = next(r for r in meta if r[0] == "num_warps")
        assert warps[2:4] == ["8", "4"]  # config 0 runs 8 warps, config 1 four
        await pilot.press("m", "a")
        await pilot.pause()
        meta = cells(screen.query_one("#diff-meta", DataTable))
        assert len(meta) == len(cmp.metadata) > len(changed)
        # per-Python-line deltas
        await pilot.press("l")
        await pilot.pause()
        assert screen.query_one(TabbedContent).active == "tab-lines"
        lines = cells(screen.query_one("#diff-lines", DataTable))
        assert [int(r[0]) for r in lines] == [ln.line for ln in cmp.lines] and lines
        first = cmp.lines[0]
        changed_stage = first.changed_stages[0]
        c = first.count(changed_stage)
        col = 1 + [x.name for x in first.counts].index(changed_stage)
        assert lines[0][col] == f"{c.before}->{c.after}"
        assert lines[0][-1] == first.text.strip()


@run_async
async def test_stage_panes_carry_the_engine_marks(compared):
    cmp, texts = compared
    log = []
    app = make_app(BUNDLE, keymap={})
    async with app.run_test(size=SIZE, message_hook=log.append) as pilot:
        app.push_screen(DiffScreen(cmp, texts=texts))
        await pilot.pause()
        screen = app.screen
        first = stage_events(log)[-1]
        assert first.stage == next(s for s, d in cmp.stages.items() if d.changes) and first.full_text
        await pilot.press("s")
        await pilot.pause()
        stage = stage_events(log)[-1].stage
        stages = list(cmp.stages)
        assert stage == stages[(stages.index(first.stage) + 1) % len(stages)]
        d = cmp.stages[stage]
        a, b = screen.query_one("#pane-a", IRView), screen.query_one("#pane-b", IRView)
        assert a.line_count == len(texts[stage][0].splitlines())
        want_b = {c.after.line - 1: KINDS[c.kind] for c in d.changes if c.after and c.after.line > 0}
        want_a = {c.before.line - 1: KINDS[c.kind] for c in d.changes if c.before and c.before.line > 0}
        assert b.marks == want_b and a.marks == want_a
        # the cursor in A takes B to the paired line
        x, y = d.pairs[len(d.pairs) // 2]
        a.focus()
        await pilot.pause()
        a.goto_line(x - 1)
        await pilot.pause()
        await pilot.pause()
        assert b.cursor_line == y - 1


def test_changes_only_without_texts(compared):
    cmp, _ = compared
    d = cmp.stages["ttgir"]
    content = pane_content(d, None)
    rows_a, rows_b = content.text_a.split("\n"), content.text_b.split("\n")
    assert len(rows_a) == len(rows_b) == len(d.changes) and not content.full_text
    for i, c in enumerate(d.changes):
        assert (c.before.text in rows_a[i]) if c.before else rows_a[i] == ""
        assert (c.after.text in rows_b[i]) if c.after else rows_b[i] == ""
    assert nearest([(0, 0), (10, 12)], 11) == 12 and nearest([(5, 1)], 2) is None


@run_async
async def test_changes_only_screen(compared):
    cmp, _ = compared
    app = make_app(BUNDLE, keymap={})
    async with app.run_test(size=SIZE) as pilot:
        app.open_diff(cmp)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        assert "(changes only)" in str(screen.query_one("#stage-bar").render())
        d = cmp.stages[screen.stage]
        assert screen.query_one("#pane-b", IRView).line_count == len(d.changes)


def test_diff_tui_opens_the_app(monkeypatch):
    seen = {}

    async def drive(app):
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = app.screen
            seen["screen"] = type(screen).__name__
            seen["stages"] = list(screen.comparison.stages)
            seen["sides"] = str(screen.query_one("#diff-sides").render())
            seen["full"] = screen.texts_of(screen.stage) is not None
            await pilot.press("escape")
            seen["after_escape"] = type(app.screen).__name__

    def fake_tui(cmp, a, b, passes):
        asyncio.run(drive(diff_cmd.tui_app(cmp, a, b, passes=passes)))
        return 0

    monkeypatch.setattr(diff_cmd, "_tui", fake_tui)
    spec = str(BUNDLE) + ":matmul_kernel"
    assert cli_main(["diff", spec + "#0", spec + "#1", "--stage", "ttgir", "--tui"]) == 0
    assert seen["screen"] == "DiffScreen" and seen["stages"] == ["ttgir"] and seen["full"]
    assert "#2" in seen["sides"] and "#3" in seen["sides"]
    assert seen["after_escape"] == "BrowserScreen"


def test_diff_tui_refuses_files_in_one_line(tmp_path, capsys):
    with open_bundle(str(BUNDLE)) as b:
        text = b.capture("add_kernel").stage("ttgir").text
    (tmp_path / "a.ttgir").write_text(text)
    (tmp_path / "b.ttgir").write_text(text)
    assert cli_main(["diff", str(tmp_path / "a.ttgir"), str(tmp_path / "b.ttgir"), "--tui"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("irscope: error: --tui") and "\n" not in err


def test_snapshot_diff(snap_compare, compared):
    cmp, texts = compared
    app, open_ = diff_app(cmp, texts)
    assert snap_compare(app, terminal_size=SIZE, run_before=open_)


def test_snapshot_diff_lines_80x24(snap_compare, compared):
    cmp, texts = compared
    app, open_ = diff_app(cmp, texts)

    async def run_before(pilot):
        await open_(pilot)
        await pilot.press("l")
        await pilot.pause()
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


@run_async
async def test_pipeline_tab(compared):
    cmp, texts = compared
    app = make_app(BUNDLE, keymap={})
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(DiffScreen(cmp, texts=texts))
        await pilot.pause()
        await pilot.press("p")
        await pilot.pause()
        screen = app.screen
        assert screen.query_one(TabbedContent).active == "tab-passes"
        rows = cells(screen.query_one("#diff-passes", DataTable))
        want = sum(len(s.added) + len(s.removed) + len(s.reordered) + len(s.effect_changed)
                   for s in cmp.passes.stages)
        assert want and len(rows) == want
        effect = next(e for s in cmp.passes.stages for e in s.effect_changed)
        assert any(r[1] == "effect" and r[2] == effect.name for r in rows)
