"""How fast the pass stepper shows the next pass (goal: <= 100 ms).

    .venv/bin/python benchmarks/bench_tui_passes.py [--bundle B] [--kernel matmul_kernel] [--runs 3]

Drives the real app (``make_app``, as ``irscope open`` builds it) with Textual's
Pilot, opens the stepper on each stage of the kernel that has passes and presses
right through the whole timeline, ``--pause`` seconds between presses (a person
reading; 0 is a key held down). Per press it records

* ``text``: from the key press until the IR pane holds the next pass's text (the
  stepper sets it in the key handler, so this is the "next pass appears" figure);
* ``marks``: until the pass's changes are marked (the ``StepShown`` message): a
  cache hit when the background prefetch got there first, else one diff;
* ``handler``: the time spent in the key's action itself (reading the text,
  setting the panes), without the repaint that follows.

``text`` is observed by a coroutine on the app's event loop, so it includes the
repaint when the loop runs it first (it usually does): it is the figure to hold
against the goal.

Printed: median and max of each, per stage, and the same for the baseline of
diffing the pass on demand with no cache and no prefetch (``step_view`` called
directly, what a stepper without a worker would block the UI for).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from textual import events  # noqa: E402

from irscope.core import open_bundle  # noqa: E402
from irscope.tui.app import make_app  # noqa: E402
from irscope.tui.screens.passes import PassStepperScreen, step_view  # noqa: E402


async def _wait(cond, limit: float = 30.0) -> None:
    end = time.perf_counter() + limit
    while not cond():
        if time.perf_counter() > end:
            raise TimeoutError
        await asyncio.sleep(0.001)


async def drive(bundle: str, kernel: str, stage: str, pause: float):
    shown: list[int] = []

    def hook(m) -> None:
        if isinstance(m, PassStepperScreen.StepShown):
            shown.append(m.index)

    app = make_app(bundle, keymap={})
    texts, marks = [], []
    handler: list[float] = []
    action = PassStepperScreen.action_next_pass

    def timed(screen) -> None:
        t = time.perf_counter()
        action(screen)
        handler.append(time.perf_counter() - t)
    PassStepperScreen.action_next_pass = timed
    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
        cap = app.bundle.capture(kernel)
        app.open_passes(cap, stage)
        await pilot.pause()
        screen = app.screen
        await _wait(lambda: screen.current in shown)
        order = screen.visible()
        for nxt in order[1:]:
            await asyncio.sleep(pause)
            t = time.perf_counter()
            # the key goes in as the terminal driver delivers it; not pilot.press,
            # which also waits until every worker is idle
            key = events.Key("right", None)
            key.set_sender(app)
            app._driver.send_message(key)
            # the pane holds pass nxt's text (the stepper records which text it set)
            await _wait(lambda: screen.current == nxt and screen._shown_text == (nxt, "text"))
            texts.append(time.perf_counter() - t)
            await _wait(lambda: shown and shown[-1] == nxt)
            marks.append(time.perf_counter() - t)
    PassStepperScreen.action_next_pass = action
    return texts, marks, handler


def baseline(bundle: str, kernel: str, stage: str) -> list[float]:
    with open_bundle(bundle) as b:
        cap = b.capture(kernel)
        out = []
        for step in [s for s in cap.pass_steps() if s.stage == stage][1:]:
            t = time.perf_counter()
            step_view(cap, step)  # the step's diff is computed here, uncached
            out.append(time.perf_counter() - t)
        return out


def _fmt(xs: list[float]) -> str:
    return f"median {statistics.median(xs) * 1000:7.1f} ms, max {max(xs) * 1000:7.1f} ms (n={len(xs)})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", default=str(ROOT / "tests" / "data" / "samples_sm90.irscope"))
    ap.add_argument("--kernel", default="matmul_kernel")
    ap.add_argument("--stages", default="ttir,ttgir,llir")
    ap.add_argument("--pause", type=float, default=0.3, help="seconds between presses")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f}; "
          f"{args.kernel} in {args.bundle}, {args.pause}s between presses, {args.runs} run(s)")
    for stage in args.stages.split(","):
        texts, marks, handlers, base = [], [], [], []
        for _ in range(args.runs):
            t, m, h = asyncio.run(drive(args.bundle, args.kernel, stage, args.pause))
            texts += t
            marks += m
            handlers += h
            base += baseline(args.bundle, args.kernel, stage)
        print(f"{stage:6} next pass's text: {_fmt(texts)}")
        print(f"{'':6} its marks:         {_fmt(marks)}")
        print(f"{'':6} key handler alone: {_fmt(handlers)}")
        print(f"{'':6} baseline, diff on demand (no cache, no prefetch): {_fmt(base)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
