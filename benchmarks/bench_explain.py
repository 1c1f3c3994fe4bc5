"""``irscope explain`` on every sample capture: warm in one process, and as a whole process.

    python benchmarks/bench_explain.py [--bundle tests/data/samples_sm90.irscope] [--runs 5] [--json FILE]

* **warm**: one interpreter with irscope imported and one explain already done (so
  every module is loaded); each run opens the bundle afresh (no capture's parse is
  cached) and times ``cap.explain()`` for each capture. Also timed alone, on fresh
  captures, the parts it is made of: the per-line costs (:mod:`irscope.core.line_costs`,
  which parse TTIR, TTGIR, LLVM IR, PTX and SASS), the loops and intensity
  (:mod:`irscope.core.loops`), the conversions (:mod:`irscope.core.conversions`) and
  the remarks. Goal <= 0.5 s per capture.
* **process**: ``python -m irscope explain BUNDLE #ID --json`` per capture, the
  wall time of the whole process (interpreter start included), beside a bare
  ``python -c pass``. Goal <= 1 s per capture.

Medians of ``--runs``.
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
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import irscope  # noqa: E402
from irscope.core.conversions import conversions_of  # noqa: E402
from irscope.core.line_costs import line_costs  # noqa: E402
from irscope.core.loops import intensity_of, loops_of  # noqa: E402
from irscope.core.remarks import remarks_of  # noqa: E402

PARTS: dict[str, Callable] = {
    "explain": lambda cap: cap.explain(),
    "line_costs": line_costs,
    "loops+intensity": lambda cap: (loops_of(cap, remarks_of(cap).items), intensity_of(cap)),
    "conversions": conversions_of,
    "remarks": remarks_of,
}


def _fresh_time(bundle: str, cid: int, part: Callable) -> float:
    with irscope.open(bundle) as b:
        cap = next(c for c in b.captures() if c.id == cid)
        t = time.perf_counter()
        part(cap)
        return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", default=str(ROOT / "tests" / "data" / "samples_sm90.irscope"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    with irscope.open(args.bundle) as b:
        caps = [(c.id, c.title()) for c in b.captures() if not c.failed]
        b.captures()[0].explain()  # load every module once
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="0")
    rows = []
    for cid, title in caps:
        row: dict = {"capture": cid, "title": title}
        for name, part in PARTS.items():
            row[name] = statistics.median(_fresh_time(args.bundle, cid, part) for _ in range(args.runs))
        cmd = [sys.executable, "-m", "irscope", "explain", args.bundle, f"#{cid}", "--json"]
        subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=ROOT)  # .pyc files written
        walls = []
        for _ in range(args.runs):
            t = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=ROOT)
            walls.append(time.perf_counter() - t)
        row["process"] = statistics.median(walls)
        rows.append(row)
        print(f"#{cid} {title[:70]}: explain {row['explain']:.3f} s warm "
              f"(line costs {row['line_costs']:.3f}, loops {row['loops+intensity']:.3f}, "
              f"conversions {row['conversions']:.3f}); process {row['process']:.3f} s", flush=True)
    bare = []
    for _ in range(args.runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - t)
    res = {"bundle": args.bundle, "runs": args.runs, "captures": rows,
           "max_warm": max(r["explain"] for r in rows), "max_process": max(r["process"] for r in rows),
           "bare_python": statistics.median(bare), "python": platform.python_version(),
           "machine": platform.node(), "cpus": os.cpu_count()}
    print(f"slowest: warm {res['max_warm']:.3f} s (goal <= 0.5 s), process {res['max_process']:.3f} s "
          f"(goal <= 1 s); bare python {res['bare_python']:.3f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
