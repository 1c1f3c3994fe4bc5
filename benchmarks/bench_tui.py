"""How fast ``irscope open`` is on big inputs, driven through Textual's Pilot.

    .venv/bin/python benchmarks/bench_tui.py [--runs 3] [--quick]

Builds two bundles in a temp dir by copying the real captures of
``tests/data/samples_sm90.irscope`` (IR text, per-pass snapshots and all) into new rows
with new variant and target labels: 100 captures and 1,000 captures. Then measures,
median of ``--runs`` fresh runs each:

* first screen: from ``make_app`` until the browser table holds every row of the
  100-kernel bundle (goal <= 1 s), and that no stage was parsed by then; baseline:
  the core's listing alone (``browser_rows``, what the table shows);
* 1,000 captures: the same, plus peak RSS of the process (each run in its own child
  process, so the peak is that run's; goal <= 1.5 s);
* switching stage tab in the matmul kernel view: key press until the pane holds the
  new stage's text (goal <= 200 ms), first visit and second visit; baseline: reading
  and parsing that stage on the spot (what a UI without workers would block for);
* moving the cursor to another Python line: key press until the stage pane's marks
  are the new line's ops (goal <= 50 ms); baseline: ``Capture.ops_at_line``, the
  core's per-call scan;
* a 50,000-line LLVM IR pane: page-down key until the next frame is drawn; baseline:
  Rich rendering a tenth of that text once, as a ``Static`` holding it would (the whole
  text takes minutes).

Keys go in as the terminal driver delivers them (not ``pilot.press``, which also waits
for every worker to go idle).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from textual import events  # noqa: E402

SAMPLES = ROOT / "tests" / "data" / "samples_sm90.irscope"
TARGETS = ("sm_90", "sm_80", "sm_89", "sm_100")


def make_bundle(dst: Path, n: int) -> Path:
    """A copy of the sample bundle with ``n`` captures: the real rows, then copies of them
    (same IR blobs, stages and pass rows) under new variant and target labels."""
    shutil.copyfile(SAMPLES, dst)
    db = sqlite3.connect(dst)
    cols = [r[1] for r in db.execute("PRAGMA table_info(captures)") if r[1] != "id"]
    originals = [r[0] for r in db.execute("SELECT id FROM captures ORDER BY id")]
    have = len(originals)
    i = 0
    while have < n:
        src = originals[i % len(originals)]
        copy = i // len(originals) + 1
        row = dict(zip(cols, db.execute(f"SELECT {', '.join(cols)} FROM captures WHERE id = ?",
                                        (src,)).fetchone()))
        row["variant"] = (row["variant"] + "," if row["variant"] else "") + f"copy={copy}"
        row["target"] = TARGETS[copy % len(TARGETS)]
        cur = db.execute(f"INSERT INTO captures ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                         [row[c] for c in cols])
        new = cur.lastrowid
        db.execute("INSERT INTO stages SELECT ?, stage, blob, size FROM stages WHERE capture_id = ?",
                   (new, src))
        db.execute('INSERT INTO passes SELECT ?, seq, stage, kind, "when", name, argument, options, '
                   "anchor, anchor_name, blob, size, seconds FROM passes WHERE capture_id = ?", (new, src))
        have += 1
        i += 1
    db.commit()
    db.close()
    return dst


async def _until(cond, limit: float = 60.0) -> None:
    end = time.perf_counter() + limit
    while not cond():
        if time.perf_counter() > end:
            raise TimeoutError("condition not met")
        await asyncio.sleep(0.0005)


def _send(app, key: str) -> None:
    event = events.Key(key, None)
    event.set_sender(app)
    app._driver.send_message(event)


# -- first screen ------------------------------------------------------------------

async def first_screen(path: str) -> dict:
    from irscope.tui.app import make_app

    t0 = time.perf_counter()
    app = make_app(path, keymap={})
    async with app.run_test(size=(120, 40)) as pilot:
        browser = app.screen
        n = len(app.bundle.captures())
        await _until(lambda: len(browser.shown) == n and
                     browser.query_one("#captures").row_count == n)
        await pilot.pause(0)  # the frame with the rows
        elapsed = time.perf_counter() - t0
        parsed = sum(1 for c in app.bundle.captures() for k in c._cache
                     if isinstance(k, tuple) and k[0] in ("module", "pass_module"))
    return {"seconds": elapsed, "captures": n, "parsed_stages": parsed}


def listing_baseline(path: str) -> float:
    from irscope.core import open_bundle
    from irscope.tui.screen_data import browser_rows

    t = time.perf_counter()
    with open_bundle(path) as b:
        browser_rows(b)
    return time.perf_counter() - t


def child_open(path: str) -> None:
    """Child process: one first-screen run, then its peak RSS, as JSON on stdout."""
    got = asyncio.run(first_screen(path))
    got["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(got))


def run_child(path: str) -> dict:
    p = subprocess.run([sys.executable, __file__, "--child-open", path], capture_output=True,
                       text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


# -- kernel view ----------------------------------------------------------------------

async def kernel_view(path: str) -> dict:
    from irscope.tui.app import make_app
    from irscope.tui.widgets.ir_view import IRView

    app = make_app(path, "matmul_kernel", keymap={})
    out: dict[str, list[float]] = {"tab_first": [], "tab_again": [], "line": []}
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(lambda: type(app.screen).__name__ == "KernelScreen")
        screen = app.screen
        await _until(lambda: len(screen.indexes) == len(screen.stages))  # background indexing done
        await pilot.pause(0.2)
        for visit in ("tab_first", "tab_again"):
            for _ in screen.stages:
                before = screen.stage
                t = time.perf_counter()
                _send(app, "t")
                await _until(lambda: screen.stage != before and screen._holds["#stage"] == screen.stage)
                await pilot.pause(0)
                out[visit].append(time.perf_counter() - t)
                await pilot.pause(0.05)
        # Python line moves, on the TTGIR tab, across the kernel body
        while screen.stage != "ttgir":
            before = screen.stage
            _send(app, "t")
            await _until(lambda: screen.stage != before and screen._holds["#stage"] == screen.stage)
        src = screen.query_one("#source", IRView)
        stage = screen.query_one("#stage", IRView)
        src.focus()
        src.goto_line(0)
        await pilot.pause(0.1)
        index = screen.indexes["ttgir"]
        for _ in range(min(40, src.line_count - 1)):
            nxt = screen.first_line + src.cursor_line + 1
            want = {op.line - 1: "linked" for op in index.by_python_line.get(nxt, ())}
            t = time.perf_counter()
            _send(app, "down")
            await _until(lambda: src.cursor_line + screen.first_line == nxt and stage.marks == want)
            await pilot.pause(0)
            out["line"].append(time.perf_counter() - t)
        cap = screen.capture
    base_line = []
    for line in range(screen.first_line, screen.first_line + 40):
        t = time.perf_counter()
        cap.ops_at_line(line)
        base_line.append(time.perf_counter() - t)
    return out | {"base_line": base_line}


def stage_baseline(path: str) -> dict[str, float]:
    """Read and parse each stage of a fresh capture: what a blocking tab switch waits for."""
    from irscope.core import open_bundle

    out = {}
    with open_bundle(path) as b:
        cap = b.capture("matmul_kernel")
        for s in ("ttir", "ttgir", "llir", "ptx", "sass"):
            t = time.perf_counter()
            _ = cap.stage(s).module
            out[s] = time.perf_counter() - t
    return out


async def big_pane(lines_wanted: int = 50_000) -> dict:
    from rich.console import Console
    from rich.text import Text
    from textual.app import App

    from irscope.core import open_bundle
    from irscope.tui.widgets.ir_view import IRView

    with open_bundle(str(SAMPLES)) as b:
        llir = b.capture("matmul_kernel").stage("llir").text
    text = "\n".join((llir.splitlines() * (lines_wanted // len(llir.splitlines()) + 1))[:lines_wanted])

    class Pane(App):
        def compose(self):
            yield IRView(text, language="llvm")

    frames = []
    app = Pane()
    async with app.run_test(size=(120, 40)) as pilot:
        view = app.query_one(IRView)
        view.focus()
        await pilot.pause(0.1)
        for _ in range(30):
            before = view.cursor_line
            t = time.perf_counter()
            _send(app, "pagedown")
            await _until(lambda: view.cursor_line != before)
            await pilot.pause(0)  # the repaint
            frames.append(time.perf_counter() - t)
    # The baseline renders a tenth of the text: all 50,000 lines take minutes here.
    part = "\n".join(text.splitlines()[:lines_wanted // 10])
    with open(os.devnull, "w") as sink:
        t = time.perf_counter()
        Console(width=120, file=sink).render_lines(Text(part), pad=False)
        static = time.perf_counter() - t
    return {"frames": frames, "static_render": static, "lines": lines_wanted,
            "static_lines": lines_wanted // 10}


def med(xs) -> float:
    return statistics.median(xs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--child-open", metavar="BUNDLE", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_open:
        child_open(args.child_open)
        return 0
    print(f"machine: {platform.machine()} {os.cpu_count()} cpus, python {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        b100 = str(make_bundle(Path(tmp) / "k100.irscope", 100))
        b1000 = str(make_bundle(Path(tmp) / "k1000.irscope", 1000))
        for label, path in (("100 captures", b100), ("1,000 captures", b1000)):
            runs = [run_child(path) for _ in range(args.runs)]
            base = [listing_baseline(path) for _ in range(args.runs)]
            each = ", ".join(f"{r['seconds']:.3f}" for r in runs)
            print(f"first screen, {label}: {med([r['seconds'] for r in runs]):.3f} s (runs {each}); "
                  f"stages parsed: {max(r['parsed_stages'] for r in runs)}; "
                  f"peak RSS {med([r['peak_rss_mib'] for r in runs]):.0f} MiB; "
                  f"baseline listing {med(base):.3f} s")
        kv = [asyncio.run(kernel_view(b100)) for _ in range(args.runs)]
        sb = stage_baseline(b100)
        for key, name in (("tab_first", "tab switch, first visit"), ("tab_again", "tab switch, again")):
            xs = [x for r in kv for x in r[key]]
            print(f"{name}: median {med(xs) * 1000:.1f} ms, max {max(xs) * 1000:.1f} ms")
        print("baseline read+parse per stage: " + ", ".join(f"{s} {v * 1000:.0f} ms" for s, v in sb.items()))
        xs = [x for r in kv for x in r["line"]]
        bl = [x for r in kv for x in r["base_line"]]
        print(f"python line move: median {med(xs) * 1000:.1f} ms, max {max(xs) * 1000:.1f} ms; "
              f"baseline ops_at_line {med(bl) * 1000:.1f} ms")
    bp = [asyncio.run(big_pane()) for _ in range(args.runs)]
    frames = [x for r in bp for x in r["frames"]]
    print(f"50,000-line pane page-down: median {med(frames) * 1000:.1f} ms, max {max(frames) * 1000:.1f} ms; "
          f"baseline: Rich renders {bp[0]['static_lines']:,} of those lines (what a Static holding "
          f"the text redoes) in {med([r['static_render'] for r in bp]):.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
