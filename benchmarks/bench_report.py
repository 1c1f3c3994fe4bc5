"""Time ``irscope report`` on a bundle and measure the report's size.

    python benchmarks/bench_report.py [--bundle tests/data/samples_sm90.irscope] [--runs 3]

Each run opens the bundle afresh (nothing cached between runs) and builds the
report into a new temporary folder. Reported, median of the runs:

1. the baseline, measured in the same runs: what the report has to compute
   whatever it looks like, every capture's stages parsed and every pass diffed
   (the core's pass steps, what ``irscope passes`` and ``irscope diff BUNDLE:K
   --passes`` compute);
2. the report without pictures (``--no-pictures``);
3. the whole report: graphs, lineages and layouts drawn by the real ``dot``.

Sizes: the folder's bytes (and the largest page), against the IR text the
bundle holds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import irscope  # noqa: E402
from irscope.export.report import build_report  # noqa: E402
from irscope.export.report.build import folder_bytes  # noqa: E402


def _baseline(bundle: str) -> float:
    t0 = time.perf_counter()
    with irscope.open(bundle) as b:
        for cap in b.captures():
            for st in cap.modules().values():
                st.ops()
            for step in cap.pass_steps():
                step.counts
    return time.perf_counter() - t0


def _report(bundle: str, pictures: bool) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report")
        t0 = time.perf_counter()
        build_report([bundle], out, command="bench", pictures=None if pictures else False)
        seconds = time.perf_counter() - t0
        largest = max(p.stat().st_size for p in Path(out).glob("*.html"))
        return seconds, folder_bytes(out), largest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bundle", default=str(ROOT / "tests" / "data" / "samples_sm90.irscope"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    base, plain, full = [], [], []
    for _ in range(args.runs):
        base.append(_baseline(args.bundle))
        plain.append(_report(args.bundle, False))
        full.append(_report(args.bundle, True))
    with irscope.open(args.bundle) as b:
        raw, caps = b.raw_bytes, len(b.captures())
    med = statistics.median
    out = {
        "bundle": os.path.relpath(args.bundle, ROOT), "captures": caps, "raw_ir_bytes": raw, "runs": args.runs,
        "baseline_s": med(base), "no_pictures_s": med(x[0] for x in plain), "full_s": med(x[0] for x in full),
        "no_pictures_bytes": plain[0][1], "full_bytes": full[0][1], "largest_page_bytes": full[0][2],
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    mib = 2 ** 20
    print(f"{out['bundle']}: {caps} captures, {raw / mib:.1f} MiB of IR text; median of {args.runs} run(s); "
          f"{out['machine']}")
    print("| what | time | vs baseline | size |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| baseline: parse every stage, diff every pass | {out['baseline_s']:.1f} s | 1.0x | - |")
    print(f"| report, --no-pictures | {out['no_pictures_s']:.1f} s | "
          f"{out['no_pictures_s'] / out['baseline_s']:.1f}x | {out['no_pictures_bytes'] / mib:.2f} MiB |")
    print(f"| report, with pictures | {out['full_s']:.1f} s | {out['full_s'] / out['baseline_s']:.1f}x | "
          f"{out['full_bytes'] / mib:.2f} MiB (largest page {out['largest_page_bytes'] / mib:.2f} MiB) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
