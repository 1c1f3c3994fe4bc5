"""Bundle size against the raw IR text it holds.

    python benchmarks/bench_bundle_size.py [--json OUT]

Captures (no GPU, sm_90) the matmul and attention samples with per-pass MLIR,
and matmul with --llvm-passes, then reports for each: the raw bytes of every
stage and snapshot (what a dump folder would hold), the bundle file's size, and
in the same run the baseline the facts file cites: whole-snapshot dedup plus
zlib per blob. Medians are not needed: sizes are deterministic for a given
Triton; capture time is reported as the median of --runs runs.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from irscope.store.bundle import Bundle  # noqa: E402

CASES = [("matmul_autotune", []), ("flash_attention", []), ("matmul_autotune", ["--llvm-passes"])]


def _baseline_bytes(bundle: Bundle) -> int:
    seen, total = set(), 0
    for row in bundle.captures():
        texts = [bundle.text(p.blob) for p in bundle.passes(row.id)]
        texts += [bundle.stage_text(row.id, s) for s in row.stages]
        for t in texts:
            raw = t.encode() if isinstance(t, str) else t
            if raw not in seen:
                seen.add(raw)
                total += len(zlib.compress(raw, 6))
    return total


def measure(name: str, flags: list[str], runs: int) -> dict:
    times, result = [], {}
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "b.irscope")
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "irscope", "run", "--no-open", os.path.join(ROOT, "sample_kernels", name + ".py"),
                            "-q", "-o", out, *flags], check=True, capture_output=True, cwd=ROOT)
            times.append(time.perf_counter() - t0)
            with Bundle.open(out) as b:
                rows = b.captures()
                raw = sum(r.raw_bytes for r in rows)
                result = {
                    "case": name + (" " + " ".join(flags) if flags else ""),
                    "captures": len(rows),
                    "snapshots": sum(r.passes for r in rows),
                    "raw_bytes": raw,
                    "bundle_bytes": os.path.getsize(out),
                    "baseline_dedup_zlib_bytes": _baseline_bytes(b),
                }
    result["bundle_pct"] = 100 * result["bundle_bytes"] / result["raw_bytes"]
    result["baseline_pct"] = 100 * result["baseline_dedup_zlib_bytes"] / result["raw_bytes"]
    result["capture_median_s"] = statistics.median(times)
    result["runs"] = runs
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    results = [measure(n, f, args.runs) for n, f in CASES]
    for r in results:
        print(f"{r['case']:<32} {r['captures']} captures, {r['snapshots']} snapshots, raw {r['raw_bytes'] / 1e6:.1f} MB, "
              f"bundle {r['bundle_bytes'] / 1e3:.0f} KB = {r['bundle_pct']:.2f}% "
              f"(dedup+zlib baseline {r['baseline_pct']:.2f}%), capture {r['capture_median_s']:.1f}s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
