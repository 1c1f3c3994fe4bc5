"""Open a bundle and show one capture's TTGIR through the API, cold, in a fresh process.

    python benchmarks/bench_api_open.py [--bundle out/samples.irscope] [--kernel matmul_kernel] [--runs 9]

Each run is a new interpreter that imports irscope, opens the bundle, picks the
capture, reads its TTGIR and parses it (``cap.stage("ttgir").module``): the first
screen of every view. Reported, median of the runs: the wall time of the whole
process (interpreter start included), the time inside it from before ``import
irscope`` to the parsed module, and, as the baseline in the same runs, a bare
``python -c pass`` (what no tool can go below). The goal is <= 150 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import time
t0 = time.perf_counter()
import irscope
b = irscope.open({bundle!r})
cap = b.capture({kernel!r})
mod = cap.stage("ttgir").module
n = len(mod.all_ops)
t1 = time.perf_counter()
print(n, t1 - t0)
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", default=str(ROOT / "out" / "samples.irscope"))
    ap.add_argument("--kernel", default="matmul_kernel")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--json")
    args = ap.parse_args()
    code = CHILD.format(bundle=args.bundle, kernel=args.kernel)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="0")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=env)  # .pyc files written
    walls, inside, bare = [], [], []
    for _ in range(args.runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - t)
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
        walls.append(time.perf_counter() - t)
        ops, secs = out.stdout.split()
        inside.append(float(secs))
    res = {"bundle": args.bundle, "kernel": args.kernel, "ttgir_ops": int(ops), "runs": args.runs,
           "process_wall_ms_median": round(statistics.median(walls) * 1000, 1),
           "in_process_ms_median": round(statistics.median(inside) * 1000, 1),
           "bare_python_ms_median": round(statistics.median(bare) * 1000, 1)}
    print(f"open + show {args.kernel} TTGIR ({ops} ops), cold, fresh process: "
          f"{res['process_wall_ms_median']} ms wall ({res['in_process_ms_median']} ms from 'import irscope' "
          f"to the parsed module; a bare 'python -c pass' takes {res['bare_python_ms_median']} ms)")
    if args.json:
        res["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "platform": platform.platform()}
        Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
