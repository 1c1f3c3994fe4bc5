"""``irscope passes --ablate`` on the attention sample: the wall time of the whole ablation.

    python benchmarks/bench_ablate.py [--bundle out/samples.irscope] [--kernel _attn_fwd]
        [--variant STAGE=3] [--jobs 2] [--runs 1] [--skip-unchanged] [--json FILE]

Each run copies the bundle to a fresh folder (the table is attached to the copy,
the replays go to a fresh side bundle, so no run reuses another's compiles) and
times ``python -m irscope passes COPY KERNEL --variant V --ablate --jobs N --json``
as a whole process: interpreter start, one replay per pass of the TTGIR pipeline
(with ``--skip-unchanged``: only the passes that changed the IR in the original
compile) plus the control, the figures, diffs and ranking. Goal: the attention sample within
3 minutes on 2 cores. Prints the runs, their median, and the load average before
and after (the VM is shared: a loaded machine says so).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one_run(bundle: str, kernel: str, variant: str, jobs: int, skip_unchanged: bool) -> dict:
    """One timed ablation of a fresh copy of ``bundle``."""
    with tempfile.TemporaryDirectory(prefix="bench-ablate-") as tmp:
        copy = os.path.join(tmp, "b.irscope")
        shutil.copy(bundle, copy)
        load = os.getloadavg()[0]
        t = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "irscope", "passes", copy, kernel, "--variant", variant,
                            "--ablate", "--jobs", str(jobs), "--json", *(["--skip-unchanged"] if skip_unchanged else [])],
                           capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - t
        if p.returncode != 0:
            raise SystemExit(f"ablation failed ({p.returncode}): {p.stderr.strip()}")
        table = json.loads(p.stdout)
        return {"seconds": round(wall, 2), "rows": len(table["rows"]),
                "replays": sum(1 for r in table["rows"] if r["replayed"]) + 1,
                "failed": sum(1 for r in table["rows"] if not r["compiled"]),
                "no_effect": sum(1 for r in table["rows"] if r["compiled"] and r["effect"] == 0),
                "top": [r["pass"] for r in table["rows"][:5]],
                "load_before": round(load, 2), "load_after": round(os.getloadavg()[0], 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--bundle", default=str(ROOT / "out" / "samples.irscope"))
    ap.add_argument("--kernel", default="_attn_fwd")
    ap.add_argument("--variant", default="STAGE=3")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--skip-unchanged", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    runs = [one_run(args.bundle, args.kernel, args.variant, args.jobs, args.skip_unchanged) for _ in range(args.runs)]
    out = {"bundle": os.path.relpath(args.bundle, ROOT), "kernel": args.kernel, "variant": args.variant,
           "jobs": args.jobs, "skip_unchanged": args.skip_unchanged, "cpus": len(os.sched_getaffinity(0)), "python": platform.python_version(),
           "median_seconds": statistics.median(r["seconds"] for r in runs), "runs": runs}
    print(json.dumps(out, indent=2))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
