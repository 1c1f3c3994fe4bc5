"""The diff screen on two real matmul_kernel configs (Triton 3.6, sm_90), built through
the app factory, and ``irscope diff A B --tui`` run in-process."""

from __future__ import annotations

import asyncio
import re

import pytest
from textual.widgets import DataTable, TabbedContent

from irscope.cli import diff_cmd
from irscope.cli.main import main as cli_main
from irscope.core import open_bundle
from irscope.diff.compare import compare_captures
from irscope.tui.app import make_app
from irscope.tui.screens.diff import DiffScreen
from irscope.cli.diff_render import aligned_diff
from irscope.compiler.stages import display_name
from irscope.diff.change_list import change_list
from irscope.diff.dialect_counts import dialect_text
from irscope.tui.widgets.diff_panes import DiffPanes, SidePane, diff_rows

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
        assert [r[0] for r in summary] == [display_name(s) for s in cmp.stages]
        for row, (stage, d) in zip(summary, cmp.stages.items()):
            assert row[1:6] == [str(d.matched), str(d.added), str(d.removed), str(d.moved), str(d.changed)]
            assert row[7] == dialect_text(d.ops_by_dialect_before, d.ops_by_dialect_after)
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


def cli_items(d):
    """What ``irscope diff --all`` prints for one stage: fold counts and change marks, in order."""
    out = []
    for line in aligned_diff(d, None):
        text = line.plain
        m = re.match(r"    ⋯ (\d+) unchanged op\(s\)$", text)
        if m:
            out.append(("fold", int(m.group(1))))
        elif text[:1] in "+-~>" and text[1:2] == " ":
            out.append(("change", text[0]))
    return out


def app_items(panes):
    """The same, read off the app's rows: one entry per folded run, one per change."""
    out = []
    sign = {"added": "+", "removed": "-", "changed": "~", "linked": ">"}
    for r in panes.rows:
        if r.kind == "fold":
            out.append(("fold", int(re.search(r"(\d+) unchanged", r.text_b).group(1))))
        elif r.kind == "change":
            out.append(("change", sign[r.mark_a or r.mark_b]))
    return out


@run_async
async def test_panes_draw_the_cli_change_list(compared):
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
        panes = screen.query_one(DiffPanes)
        # the same changes, kinds and folded runs, in the same order, as the CLI prints
        got = app_items(panes)
        assert got == cli_items(d)
        assert sum(1 for k, _ in got if k == "change") == len(d.changes)
        assert [n for k, n in got if k == "fold"] == [f.count for f in change_list(d).folds]
        a, b = screen.query_one("#pane-a", SidePane), screen.query_one("#pane-b", SidePane)
        assert a.line_count == b.line_count == len(panes.rows)
        # each change row: the op's own line on each side, in the gutter and as text
        for row, r in enumerate(panes.rows):
            if r.kind != "change":
                continue
            c = panes.change_at(row).change
            if c.before is None:
                assert a.line_text(row) == "" and row not in a.marks
            elif c.before.line:
                assert a.row_number(row) == c.before.line
                assert a.line_text(row) == texts[stage][0].splitlines()[c.before.line - 1]
                assert a.marks[row] == KINDS[c.kind]
            else:  # an encoding alias: no op line, its own text
                assert a.row_number(row) is None and a.line_text(row) == c.before.text
            if c.after is not None and c.after.line:
                assert b.row_number(row) == c.after.line
                assert b.marks[row] == KINDS[c.kind]
        # the stage bar names stages by the registry
        bar = str(screen.query_one("#stage-bar").render())
        assert display_name(stage) in bar and all(display_name(s) in bar for s in stages)


@run_async
async def test_n_moves_to_the_next_change_and_both_sides_follow(compared):
    cmp, texts = compared
    app = make_app(BUNDLE, keymap={})
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(DiffScreen(cmp, texts=texts))
        await pilot.pause()
        screen = app.screen
        panes = screen.query_one(DiffPanes)
        a, b = panes.pane_a, panes.pane_b
        starts = panes.change_starts()
        total = len(cmp.stages[screen.stage].changes)
        assert b.cursor_line == starts[0]
        assert str(screen.query_one("#diff-position").render()).startswith(f"change 1/{total}")
        await pilot.press("n")
        await pilot.pause()
        assert a.cursor_line == b.cursor_line == starts[1]
        assert str(screen.query_one("#diff-position").render()).startswith(f"change 2/{total}")
        await pilot.press("N", "N")
        await pilot.pause()
        assert b.cursor_line == starts[-1]  # wraps to the last change
        # the cursor moved in one pane moves the other
        a.focus()
        await pilot.pause()
        a.cursor_line = starts[3]
        await pilot.pause()
        assert b.cursor_line == starts[3]
        # scrolling one side scrolls the other (to rows that keep the cursor in view: a
        # pane keeps its cursor visible when the details line under it grows)
        top = starts[3] - 1
        a.scroll_to(y=top, animate=False, immediate=True)
        await pilot.pause()
        assert b.scroll_y == a.scroll_y == top
        b.scroll_to(y=top - 1, animate=False, immediate=True)
        await pilot.pause()
        assert a.scroll_y == b.scroll_y == top - 1
        a.scroll_to(x=6, animate=False, immediate=True)  # sideways too: long ops read across
        await pilot.pause()
        assert a.scroll_x == 6 and b.scroll_x == min(6, b.max_scroll_x) > 0


@run_async
async def test_enter_opens_a_folded_run(compared):
    cmp, texts = compared
    app = make_app(BUNDLE, keymap={})
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(DiffScreen(cmp, texts=texts))
        await pilot.pause()
        screen = app.screen
        panes = screen.query_one(DiffPanes)
        before = len(panes.rows)
        row = next(i for i, r in enumerate(panes.rows) if r.kind == "fold")
        fold = change_list(cmp.stages[screen.stage]).items[panes.rows[row].item]
        panes.pane_b.focus()
        panes.goto_row(row)
        await pilot.press("enter")
        await pilot.pause()
        assert len(panes.rows) == before + fold.count  # the run's ops, under its head row
        ta, tb = (t.splitlines() for t in texts[screen.stage])
        opened = [r for r in panes.rows if r.kind == "unchanged"]
        assert [(r.line_a, r.line_b) for r in opened] == list(fold.pairs)
        assert all(r.text_a == ta[r.line_a - 1] and r.text_b == tb[r.line_b - 1] for r in opened)
        await pilot.press("enter")  # the head row closes it again
        await pilot.pause()
        assert len(panes.rows) == before


@run_async
async def test_search_finds_text_on_either_side(compared):
    cmp, texts = compared
    app = make_app(BUNDLE, keymap={})
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(DiffScreen(cmp, texts=texts))
        await pilot.pause()
        screen = app.screen
        panes = screen.query_one(DiffPanes)
        # a removed op's text is on side A only
        row = next(i for i, r in enumerate(panes.rows) if r.kind == "change" and r.mark_a == "removed")
        needle = panes.rows[row].text_a.split("=")[0].strip()
        await pilot.press("slash", *needle, "enter")
        await pilot.pause()
        assert row in panes.hits()
        assert panes.hits() == sorted(i for i, r in enumerate(panes.rows)
                                      if needle in r.text_a or needle in r.text_b)
        await pilot.press("escape")  # clears the search, stays on the screen
        await pilot.pause()
        assert app.screen is screen and panes.hits() == []


def test_inline_layout_delta_on_real_pass():
    """A pass that changes layouts shows the decoded delta on the row under the op."""
    with open_bundle(str(DATA / "learner_sm90.irscope")) as bundle:
        cap = bundle.capture("block_ptr_matmul_kernel")
        step = next(s for s in cap.pass_steps() if s.name == "TritonGPURemoveLayoutConversions" and s.diff)
        rows = diff_rows(change_list(step.diff), None)
    details = [r.text_b for r in rows if r.kind == "detail"]
    assert any("sizePerThread [1, 1] -> [1, 8]" in t for t in details)
    assert all(r.text_a == "" for r in rows if r.kind == "detail")


def test_changes_only_without_texts(compared):
    cmp, _ = compared
    d = cmp.stages["ttgir"]
    listed = change_list(d)
    rows = diff_rows(listed, None, opened=frozenset(range(len(listed.items))))
    # without the whole texts a run cannot open: one row per run, the ops' own texts
    assert sum(1 for r in rows if r.kind == "fold") == len(listed.folds)
    assert not any(r.kind == "unchanged" for r in rows)
    changes = [r for r in rows if r.kind == "change"]
    assert len(changes) == len(d.changes)
    for r, c in zip(changes, d.changes):
        assert r.text_a == (c.before.text if c.before else "") and r.text_b == (c.after.text if c.after else "")


@run_async
async def test_changes_only_screen(compared):
    cmp, _ = compared
    app = make_app(BUNDLE, keymap={})
    async with app.run_test(size=SIZE) as pilot:
        app.open_diff(cmp)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        assert "runs stay folded" in str(screen.query_one("#stage-bar").render())
        d = cmp.stages[screen.stage]
        panes = screen.query_one(DiffPanes)
        assert sum(1 for r in panes.rows if r.kind == "change") == len(d.changes)
        row = next(i for i, r in enumerate(panes.rows) if r.kind == "fold")
        assert not panes.toggle_fold(row)


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


def test_diff_pass_tui_names_the_pass_stage(monkeypatch):
    """``irscope diff A B --pass N --tui`` opens the app on the pass's stage (ttgir, shown
    as "Triton GPU IR"), not on the format its snapshots are read as (mlir)."""
    seen = {}

    async def drive(app):
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            seen["stages"] = list(app.screen.comparison.stages)
            seen["bar"] = str(app.screen.query_one("#stage-bar").render())

    def fake_tui(cmp, a, b, passes):
        asyncio.run(drive(diff_cmd.tui_app(cmp, a, b, passes=passes)))
        return 0

    monkeypatch.setattr(diff_cmd, "_tui", fake_tui)
    with open_bundle(str(BUNDLE)) as b:
        index = next(p.index for p in b.capture("matmul_kernel", variant=0).passes(stage="ttgir"))
    spec = str(BUNDLE) + ":matmul_kernel"
    assert cli_main(["diff", spec + "#0", spec + "#1", "--pass", str(index), "--tui"]) == 0
    assert seen["stages"] == ["ttgir"]
    assert "Triton GPU IR" in seen["bar"] and "mlir" not in seen["bar"]


@run_async
async def test_pass_diff_draws_the_cli_change_list():
    """The stepper's ``d`` on a pass: the same changes and folded runs as
    ``irscope diff --passes`` prints for that pass (its aligned_diff)."""
    from irscope.tui.screens.passes import PassStepperScreen

    app = make_app(DATA / "learner_sm90.irscope", keymap={})
    async with app.run_test(size=SIZE) as pilot:
        cap = app.bundle.capture("block_ptr_matmul_kernel")
        step = next(s for s in cap.pass_steps() if s.name == "TritonGPURemoveLayoutConversions")
        app.push_screen(PassStepperScreen(cap, "ttgir", index=step.index))
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        await pilot.press("d")
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        panes = screen.query_one(DiffPanes)
        assert app_items(panes) == cli_items(step.diff)
        assert any("sizePerThread [1, 1] -> [1, 8]" in r.text_b for r in panes.rows if r.kind == "detail")
