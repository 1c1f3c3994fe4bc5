"""``ls``, ``show``, ``passes`` and the app's first screen, timed for two source trees in one run.

    .venv/bin/python benchmarks/bench_views_ab.py --old /tmp/irscope-old [--new .] [--runs 7] [--json F]

Make the old tree with ``git worktree add /tmp/irscope-old COMMIT``. Each measurement is
a fresh interpreter whose ``PYTHONPATH`` puts one tree's ``irscope`` first, so both
trees run on the same interpreter, packages and bundle. The two trees alternate run by
run (old, new, old, new...), so a slow minute of the machine lands on both: the ratio
new/old is the figure, the seconds are context. Reported per command: the median wall
time of each tree, and the ratio of the medians.

* ``ls``: ``irscope ls BUNDLE`` (the table of every capture);
* ``show``: ``irscope show BUNDLE KERNEL --line N`` (one Python line in every stage);
* ``passes``: ``irscope passes BUNDLE KERNEL`` (the pass table);
* ``open``: the app's first screen on a 100-capture bundle, through each tree's own
  ``benchmarks/bench_tui.py --child-open`` (Pilot, until every row is in the table).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _env(tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = str(tree)
    env["COLUMNS"] = "200"
    return env


# ``python -m`` puts the working directory ahead of PYTHONPATH: every child runs from
# this empty folder, so the tree named by PYTHONPATH is the one imported.
_CWD = tempfile.mkdtemp(prefix="irscope-ab-")


def _wall(tree: Path, args: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "irscope", *args], env=_env(tree), check=True, cwd=_CWD,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def _open(tree: Path, bundle: str) -> float:
    p = subprocess.run([sys.executable, str(tree / "benchmarks" / "bench_tui.py"), "--child-open", bundle],
                       env=_env(tree), check=True, capture_output=True, text=True, cwd=_CWD)
    return float(json.loads(p.stdout.strip().splitlines()[-1])["seconds"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="source tree of the code to compare against")
    ap.add_argument("--new", default=str(ROOT))
    ap.add_argument("--bundle", type=lambda s: str(Path(s).resolve()), default=str(ROOT / "out" / "samples.irscope"))
    ap.add_argument("--kernel", default="matmul_kernel")
    ap.add_argument("--line", type=int, default=0, help="Python line for show (default: the kernel's tl.dot line)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json")
    args = ap.parse_args()
    trees = {"old": Path(args.old).resolve(), "new": Path(args.new).resolve()}
    line = args.line
    if not line:
        sys.path.insert(0, str(trees["new"]))
        import irscope

        cap = irscope.open(args.bundle).capture(args.kernel)
        line = next(i for i, text in enumerate(cap.source.text.splitlines(), cap.source.first_line)
                    if "tl.dot(" in text)
    sys.path.insert(0, str(trees["new"] / "benchmarks"))
    from bench_tui import make_bundle  # type: ignore[import-not-found]  # a script beside this one

    commands = {
        "ls": ["ls", args.bundle],
        "show": ["show", args.bundle, args.kernel, "--line", str(line)],
        "passes": ["passes", args.bundle, args.kernel],
    }
    times: dict[str, dict[str, list[float]]] = {name: {"old": [], "new": []} for name in [*commands, "open"]}
    with tempfile.TemporaryDirectory() as tmp:
        b100 = str(make_bundle(Path(tmp) / "k100.irscope", 100))
        for tree in trees.values():  # warm the file cache and the bytecode of both trees
            for cmd in commands.values():
                _wall(tree, cmd)
            _open(tree, b100)
        for _ in range(args.runs):
            for side, tree in trees.items():
                for name, cmd in commands.items():
                    times[name][side].append(_wall(tree, cmd))
                times["open"][side].append(_open(tree, b100))
    result = {
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, python {platform.python_version()}",
        "old": str(trees["old"]), "new": str(trees["new"]), "bundle": args.bundle, "kernel": args.kernel,
        "line": line, "runs": args.runs, "raw": times,
        "median": {n: {s: statistics.median(v) for s, v in t.items()} for n, t in times.items()},
    }
    for name, med in result["median"].items():
        ratio = med["new"] / med["old"]
        result["median"][name]["ratio"] = ratio
        print(f"{name:7s} old {med['old'] * 1000:7.1f} ms   new {med['new'] * 1000:7.1f} ms   new/old {ratio:.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
