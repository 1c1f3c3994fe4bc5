"""``irscope tune``: the time per configuration of a grid compiled with no GPU.

    python benchmarks/bench_tune.py [--bundle tests/data/samples_sm90.irscope] [--kernel matmul_kernel]
        [--grid 'BLOCK_SIZE_M=64,128 BLOCK_SIZE_N=64,128 num_stages=3,4'] [--target sm_90]
        [--jobs 1] [--runs 1] [--json FILE]

Each run times ``python -m irscope tune BUNDLE KERNEL --grid G --target T --jobs N
-o FRESH --json`` as a whole process (interpreter start, the children's Triton and
kernel-file imports, every compile with its pass dumps, storing, the figures of each
row), and the same command with the grid's first configuration alone. The time per
configuration is the difference over the extra configurations: what one more row
costs once the fixed start is paid. Also reported: Triton's own compile time of each
row (its capture's ``compile_seconds``) and the load average before and after (the
VM is shared: a loaded machine says so).
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


def _tune(bundle: str, kernel: str, grid: str, target: str, jobs: int, out: str) -> tuple[float, dict]:
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "irscope", "tune", bundle, kernel, "--grid", grid, "--target", target,
                        "--jobs", str(jobs), "-o", out, "--json"], capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"irscope tune failed ({p.returncode}): {p.stderr.strip()}")
    return wall, json.loads(p.stdout)


def _first_config(grid: str) -> str:
    """The grid with each key's first value only."""
    return " ".join(item.split(",")[0] for item in grid.split())


def one_run(bundle: str, kernel: str, grid: str, target: str, jobs: int) -> dict:
    """The whole grid and its first configuration alone, each into a fresh bundle."""
    with tempfile.TemporaryDirectory(prefix="bench-tune-") as tmp:
        load = os.getloadavg()[0]
        wall_one, _ = _tune(bundle, kernel, _first_config(grid), target, jobs, os.path.join(tmp, "one.irscope"))
        out = os.path.join(tmp, "all.irscope")
        wall_all, table = _tune(bundle, kernel, grid, target, jobs, out)
        ls = subprocess.run([sys.executable, "-m", "irscope", "ls", out, "--json"], capture_output=True, text=True,
                            cwd=ROOT, check=True)
        compile_s = {c["id"]: c["compile_seconds"] for c in json.loads(ls.stdout)}
        rows = table["rows"]
        n = len(rows)
        return {"configs": n, "seconds_all": round(wall_all, 2), "seconds_one": round(wall_one, 2),
                "seconds_per_extra_config": round((wall_all - wall_one) / (n - 1), 2) if n > 1 else None,
                "triton_compile_seconds": [round(compile_s.get(r["capture_id"]) or 0, 2) for r in rows],
                "failed": sum(1 for r in rows if not r["compiled"]),
                "cannot_launch": sum(1 for r in rows if r["cannot_launch"]),
                "load_before": round(load, 2), "load_after": round(os.getloadavg()[0], 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--bundle", default=str(ROOT / "tests" / "data" / "samples_sm90.irscope"))
    ap.add_argument("--kernel", default="matmul_kernel")
    ap.add_argument("--grid", default="BLOCK_SIZE_M=64,128 BLOCK_SIZE_N=64,128 num_stages=3,4")
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args()
    runs = [one_run(args.bundle, args.kernel, args.grid, args.target, args.jobs) for _ in range(args.runs)]
    extra = [r["seconds_per_extra_config"] for r in runs if r["seconds_per_extra_config"] is not None]
    out = {"bundle": os.path.relpath(args.bundle, ROOT), "kernel": args.kernel, "grid": args.grid,
           "target": args.target, "jobs": args.jobs, "cpus": len(os.sched_getaffinity(0)),
           "python": platform.python_version(),
           "median_seconds_all": statistics.median(r["seconds_all"] for r in runs),
           "median_seconds_per_extra_config": statistics.median(extra) if extra else None, "runs": runs}
    print(json.dumps(out, indent=2))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
