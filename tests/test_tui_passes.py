"""The pass stepper on real captured pass snapshots (matmul_kernel, Triton 3.6, sm_90),
built through the app factory the CLI uses. Marks are checked against the diff
engine run directly on the same two snapshots."""

from __future__ import annotations

import pytest

from irscope.core import open_bundle
from irscope.irdiff.engine import diff_modules
from irscope.irdiff.model import REMOVED
from irscope.tui.app import make_app
from irscope.tui.widgets.pass_about import PassAbout
from irscope.diff.change_list import change_list
from irscope.tui.screens.diff import DiffScreen
from irscope.tui.widgets.diff_panes import DiffPanes
from irscope.compiler.pass_order import Side
from irscope.tui.screens.passes import PassStepperScreen
from irscope.tui.widgets.ir_view import IRView
from irscope.tui.widgets.pass_timeline import PassTimeline
from irscope.compiler.pass_catalog import describe

from conftest import DATA
from tui_support import run_async

BUNDLE = DATA / "samples_sm90.irscope"
SIZE = (100, 30)


@pytest.fixture(scope="module")
def matmul():
    with open_bundle(str(BUNDLE)) as b:
        cap = b.capture("matmul_kernel", variant=0)
        yield cap, cap.passes()


def engine_marks(passes, before: int, after: int) -> tuple[dict[int, str], int]:
    """What the engine says pass ``before`` changed, as IRView marks and a removed count."""
    d = diff_modules(passes[before].module, passes[after].module, "mlir")
    kinds = {"added": "added", "changed": "changed", "moved": "linked"}
    marks = {c.after.line - 1: kinds[c.kind] for c in d.changes
             if c.kind != REMOVED and c.after is not None and c.after.line > 0}
    return marks, sum(1 for c in d.changes if c.kind == REMOVED)


def shown_steps(log):
    seen, out = set(), []
    for m in log:
        if isinstance(m, PassStepperScreen.StepShown) and id(m) not in seen:
            seen.add(id(m))
            out.append(m)
    return out


async def open_stepper(pilot, app, stage="ttgir"):
    cap = app.bundle.capture("matmul_kernel", variant=0)
    app.open_passes(cap, stage)
    await settle(pilot, app)
    screen = app.screen
    assert isinstance(screen, PassStepperScreen)
    return screen


async def settle(pilot, app):
    """Until no worker runs (a worker's result may start the next one: the timeline
    read starts the first diff)."""
    for _ in range(20):
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not any(w.is_running for w in app.workers):
            return


def test_sides_follow_the_timeline_rule(matmul):
    cap, passes = matmul
    steps = [s for s in cap.pass_steps() if s.stage == "ttgir"]
    assert [s.index for s in steps] == [p.index for p in passes if p.stage == "ttgir"]
    by_name = {s.name: s for s in steps}
    # the pipeliner's internal dumps compare with the snapshot just before them
    lower = by_name["LowerLoops"]
    assert lower.before == Side(lower.index - 1) and lower.after == Side(lower.index)
    # a "before" dump's result is the next non-internal snapshot: the pipeline pass
    # spans its two internal steps
    pipe = by_name["TritonGPUPipeline"]
    assert pipe.after == Side(pipe.index + 3)
    # the stage's last pass ends in the stage's own output
    assert steps[-1].after == Side(stage="ttgir")
    # the last MLIR pass of llir has no comparable "after" (its result is LLVM IR)
    llir = [s for s in cap.pass_steps() if s.stage == "llir"]
    assert llir[-1].after is None


@run_async
async def test_step_right_and_left_marks_what_the_engine_found(matmul):
    _, passes = matmul
    log = []
    app = make_app(BUNDLE, keymap={})
    async with app.run_test(size=SIZE, message_hook=log.append) as pilot:
        screen = await open_stepper(pilot, app)
        ttgir = [p.index for p in passes if p.stage == "ttgir"]
        assert screen.current == ttgir[0]
        pane = screen.query_one("#snapshot", IRView)
        want, _ = engine_marks(passes, ttgir[0], ttgir[1])
        assert want and pane.marks == want
        await pilot.press("right")
        await settle(pilot, app)
        assert screen.current == ttgir[1]
        want, removed = engine_marks(passes, ttgir[1], ttgir[2])
        assert pane.marks == want
        assert pane.line_text(0) == passes[ttgir[2]].text.splitlines()[0]
        await pilot.press("left")
        await settle(pilot, app)
        assert screen.current == ttgir[0]
        assert pane.marks == engine_marks(passes, ttgir[0], ttgir[1])[0]
        steps = shown_steps(log)
        assert [m.index for m in steps][-3:] == [ttgir[0], ttgir[1], ttgir[0]]
        assert steps[-2].marks == engine_marks(passes, ttgir[1], ttgir[2])[0]


@run_async
async def test_removed_ops_are_listed_apart(matmul):
    _, passes = matmul
    app = make_app(BUNDLE, keymap={})
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_stepper(pilot, app)
        target = next(p for p in passes if p.stage == "ttgir" and p.name == "TritonGPURemoveLayoutConversions")
        nxt = screen._steps[target.index].after.pass_index
        screen.current = target.index
        await settle(pilot, app)
        _, removed = engine_marks(passes, target.index, nxt)
        listed = screen.query_one("#removed", IRView)
        assert removed > 0 and listed.line_count == removed and listed.display
        assert set(listed.marks.values()) == {"removed"}
        assert "removed by this pass: " + str(removed) in str(screen.query_one("#removed-title").render())


@run_async
async def test_skip_unchanged_toggle(matmul):
    _, passes = matmul
    app = make_app(BUNDLE, keymap={})
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_stepper(pilot, app)
        timeline = screen.query_one(PassTimeline)
        everything = [p.index for p in passes if p.stage == "ttgir"]
        changed = [p.index for p in passes if p.stage == "ttgir" and p.changed]
        assert timeline.pass_indexes == everything
        await pilot.press("u")
        await settle(pilot, app)
        assert timeline.pass_indexes == changed and len(changed) < len(everything)
        visited = [screen.current]
        for _ in range(3):
            await pilot.press("right")
            visited.append(screen.current)
        assert visited == changed[:4]
        await pilot.press("u")
        await settle(pilot, app)
        assert timeline.pass_indexes == everything
        assert screen.current == changed[3]


@run_async
async def test_catalog_description_is_shown(matmul):
    _, passes = matmul
    app = make_app(BUNDLE, keymap={})
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await open_stepper(pilot, app)
        for _ in range(2):
            p = passes[screen.current]
            about = screen.query_one("#pass-about", PassAbout).text.plain
            info = describe(p.name, p.argument)
            assert info is not None
            assert about.startswith(info.summary)  # the whole description, never cut
            assert p.name in str(screen.query_one("#pass-title").render())
            await pilot.press("right")
            await settle(pilot, app)


@run_async
async def test_timeline_choice_and_stage_switch(matmul):
    _, passes = matmul
    app = make_app(BUNDLE, keymap={})
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_stepper(pilot, app)
        timeline = screen.query_one(PassTimeline)
        timeline.focus()
        await pilot.press("down", "down")
        await settle(pilot, app)
        assert screen.current == [p.index for p in passes if p.stage == "ttgir"][2]
        await pilot.press("s")
        await settle(pilot, app)
        assert screen.stage_name == "llir"
        assert timeline.pass_indexes == [p.index for p in passes if p.stage == "llir"]
        # the last llir pass: its IR after is not comparable, and the screen says so
        screen.current = timeline.pass_indexes[-1]
        await settle(pilot, app)
        assert "not kept in a comparable form" in str(screen.query_one("#pass-note").render())
        assert screen.query_one("#snapshot", IRView).marks == {}


@run_async
async def test_diff_key_opens_the_diff_screen_on_the_pass(matmul):
    _, passes = matmul
    app = make_app(BUNDLE, keymap={})
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_stepper(pilot, app)
        first = screen.current
        await pilot.press("d")
        await settle(pilot, app)
        assert isinstance(app.screen, DiffScreen)
        # named by the pass's stage and the registry's display name, never by its format
        assert list(app.screen.comparison.stages) == ["ttgir"]
        bar = str(app.screen.query_one("#stage-bar").render())
        assert "Triton GPU IR" in bar and "mlir" not in bar
        d = app.screen.comparison.stages["ttgir"]
        assert d.changes == diff_modules(passes[first].module, passes[first + 1].module, "mlir").changes
        # the CLI's change list, and the two sides' own lines in the gutters
        panes = app.screen.query_one(DiffPanes)
        listed = change_list(d)
        assert [r.kind for r in panes.rows].count("change") == len(d.changes)
        assert [r.kind for r in panes.rows].count("fold") == len(listed.folds)
        a, b = panes.pane_a, panes.pane_b
        numbers_a = {a.row_number(i) for i in range(a.line_count)} - {None}
        numbers_b = {b.row_number(i) for i in range(b.line_count)} - {None}
        assert max(numbers_a) <= len(passes[first].text.splitlines())
        assert max(numbers_b) <= len(passes[first + 1].text.splitlines())
        assert {c.after.line for c in d.changes if c.after and c.after.line} <= numbers_b
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen


def test_every_binding_has_an_id():
    for b in PassStepperScreen.BINDINGS + PassTimeline.BINDINGS + DiffScreen.BINDINGS:
        assert b.id, b


def _stepper_app():
    app = make_app(BUNDLE, keymap={})
    return app


async def _open_for_snapshot(pilot):
    app = pilot.app
    cap = app.bundle.capture("matmul_kernel", variant=0)
    index = next(p.index for p in cap.passes() if p.name == "TritonGPUAccelerateMatmul")
    app.push_screen(PassStepperScreen(cap, "ttgir", index=index))
    await settle(pilot, app)


def test_snapshot_stepper(snap_compare):
    assert snap_compare(_stepper_app(), terminal_size=SIZE, run_before=_open_for_snapshot)


def test_snapshot_stepper_80x24(snap_compare):
    assert snap_compare(_stepper_app(), terminal_size=(80, 24), run_before=_open_for_snapshot)
