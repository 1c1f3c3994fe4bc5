""""Replay with..." in the app (R in the kernel view): the form, the command it runs,
and a real replay run from a worker that ends on the diff screen."""

from __future__ import annotations

import shutil

import pytest
from textual.widgets import Input, Select, Static

from irscope.core import open_bundle
from irscope.errors import IrscopeError
from irscope.tui.app import make_app
from irscope.tui.screens.diff import DiffScreen
from irscope.tui.screens.kernel import KernelScreen
from irscope.tui.screens.replay_form import ReplayChoice, ReplayForm, parse_choice, replay_command

from conftest import DATA
from tui_support import run_async

SIZE = (120, 40)


def test_choice_and_command():
    assert parse_choice(" num_stages=2,  num_warps=4 ", " sm_80 ", "tritongpu-pipeline") == \
        ReplayChoice(("num_stages=2", "num_warps=4"), "sm_80", "tritongpu-pipeline")
    assert parse_choice("", "", None) == ReplayChoice()
    with pytest.raises(IrscopeError, match="'num_stages': options are KEY=VALUE"):
        parse_choice("num_stages", "", None)
    with open_bundle(str(DATA / "samples_sm90.irscope")) as b:
        cap = b.capture("#5")
        cmd = replay_command(cap, ReplayChoice(("num_stages=2",), "sm_80", "tritongpu-prefetch"), python="py")
    assert cmd == ["py", "-m", "irscope", "replay", str(DATA / "samples_sm90.irscope"), "#5", "--from", "ttir",
                   "--json", "-q", "--set", "num_stages=2", "--target", "sm_80", "--without-pass",
                   "tritongpu-prefetch"]


async def _until(pilot, ready, rounds: int = 400) -> None:
    """Pause until ``ready()`` holds (a loaded machine may take several frames to push a
    screen); the caller's assert then says what never came."""
    for _ in range(rounds):
        if ready():
            return
        await pilot.pause(0.05)


async def _open_form(pilot):
    await _until(pilot, lambda: isinstance(pilot.app.screen, KernelScreen))
    assert isinstance(pilot.app.screen, KernelScreen)
    await pilot.press("R")
    await _until(pilot, lambda: isinstance(pilot.app.screen, ReplayForm))
    form = pilot.app.screen
    assert isinstance(form, ReplayForm)
    return form


@run_async
async def test_a_malformed_option_stays_in_the_form(tmp_path):
    shutil.copy(DATA / "samples_sm90.irscope", tmp_path / "s.irscope")
    app = make_app(str(tmp_path / "s.irscope"), "#5", keymap={})
    async with app.run_test(size=SIZE) as pilot:
        form = await _open_form(pilot)
        assert "tritongpu-pipeline" in form.passes and "convert-triton-to-tritongpu" not in form.passes
        await pilot.press(*"num_stages", "enter")
        await _until(pilot, lambda: "options are KEY=VALUE" in str(form.query_one("#replay-problem", Static).render()))
        assert app.screen is form
        assert "options are KEY=VALUE" in str(form.query_one("#replay-problem", Static).render())
        await pilot.press("escape")
        await _until(pilot, lambda: isinstance(app.screen, KernelScreen))
        assert isinstance(app.screen, KernelScreen)
    assert not (tmp_path / "s.replay.irscope").exists()


@pytest.mark.slow
@run_async
async def test_replay_with_opens_the_diff(tmp_path):
    shutil.copy(DATA / "samples_sm90.irscope", tmp_path / "s.irscope")
    app = make_app(str(tmp_path / "s.irscope"), "#5", keymap={})
    async with app.run_test(size=SIZE) as pilot:
        form = await _open_form(pilot)
        form.query_one("#replay-sets", Input).value = "num_stages=2"
        form.query_one("#replay-pass", Select).value = "tritongpu-prefetch"
        await pilot.click("#replay-run")
        for _ in range(4):
            await app.workers.wait_for_complete()
            await pilot.pause()
        await _until(pilot, lambda: isinstance(app.screen, DiffScreen))
        screen = app.screen
        assert isinstance(screen, DiffScreen), type(screen)
        a, b = screen._a, screen._b
        assert a is not None and b is not None
        assert a.id == 5 and a.options["num_stages"] == 5
        assert b.options["num_stages"] == 2 and b.bundle.path.endswith("s.replay.irscope")
        assert any("tritongpu-prefetch" in n for n in b.notes)
