"""The views that need every pass step's structural counts, timed in fresh processes.

    .venv/bin/python benchmarks/bench_pass_steps.py [--old /tmp/irscope-old] [--runs 5] [--json F]

* ``passes``: ``irscope passes BUNDLE KERNEL`` (every step's counts: one structural
  diff per pass that changed the IR);
* ``diff``: ``irscope diff BUNDLE:KERNEL#0 BUNDLE:KERNEL#1`` (two captures; its
  pipeline section needs every step's counts of both).

Each run is a fresh interpreter started in an empty folder with ``PYTHONPATH`` set to
one tree, so that tree's ``irscope`` is the one imported (run from the repository, ``-m``
would put the repository's own ``irscope`` first). With ``--old TREE`` (``git worktree
add /tmp/irscope-old COMMIT``) the two trees alternate run by run, so a slow minute of
a shared machine lands on both. Reported per command and tree: the median wall time,
the median CPU time (user + system: steadier than wall on a loaded machine) and the
largest peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Runs:
    """The measurements of one command on one tree."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        return {"wall_s": round(statistics.median(self.wall), 3), "cpu_s": round(statistics.median(self.cpu), 3),
                "peak_rss_mb": round(max(self.rss_mb), 1)}


def _run(tree: Path, args: list[str], cwd: str) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of ``irscope ARGS`` on ``tree``."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = str(tree)
    env["COLUMNS"] = "200"
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "irscope", *args], env=env, cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"irscope {' '.join(args)} failed on {tree} (exit {proc.returncode})")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", help="source tree of the code to compare against")
    ap.add_argument("--new", default=str(ROOT))
    ap.add_argument("--bundle", default=str(ROOT / "out" / "samples.irscope"))
    ap.add_argument("--kernel", default="matmul_kernel")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", choices=["passes", "diff"], action="append", help="time only these commands")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    bundle = str(Path(args.bundle).resolve())
    trees = {"new": Path(args.new).resolve()}
    if args.old:
        trees = {"old": Path(args.old).resolve(), **trees}
    commands = {
        "passes": ["passes", bundle, args.kernel],
        "diff": ["diff", f"{bundle}:{args.kernel}#0", f"{bundle}:{args.kernel}#1"],
    }
    if args.only:
        commands = {k: v for k, v in commands.items() if k in args.only}
    results: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as cwd:
        for name, cmd in commands.items():
            runs = {tree: Runs() for tree in trees}
            for _ in range(args.runs):
                for tree, path in trees.items():
                    wall, cpu, rss = _run(path, cmd, cwd)
                    runs[tree].wall.append(wall)
                    runs[tree].cpu.append(cpu)
                    runs[tree].rss_mb.append(rss)
            results[name] = {tree: r.summary() for tree, r in runs.items()}
            line = "  ".join(f"{tree}: {s['wall_s']:.2f} s wall, {s['cpu_s']:.2f} s cpu, {s['peak_rss_mb']:.0f} MB"
                             for tree, s in results[name].items())
            if "old" in results[name]:
                line += f"  (new/old cpu {results[name]['new']['cpu_s'] / results[name]['old']['cpu_s']:.2f}x)"
            print(f"{name:7} {line}")
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": args.runs, "commands": commands, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
