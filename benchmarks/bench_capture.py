"""Capture overhead: `irscope run SCRIPT` against the same script run plainly
with the same dump switches and cache bypass, in paired runs.

    python benchmarks/bench_capture.py SCRIPT [SCRIPT...] [--runs 5] [--json OUT]

Baseline on a GPU machine: `python SCRIPT` with TRITON_ALWAYS_COMPILE=1,
MLIR_ENABLE_DUMP=1 and a fresh TRITON_CACHE_DIR, stderr to a file (the dumps
have to go somewhere). With no GPU a plain run cannot launch, so the baseline
is the script under irscope's compile-only bootstrap with the same switches
and the recording hook off (`--no-gpu-baseline`, chosen automatically): what
is measured then is everything irscope adds on top of compiling.
Pairs alternate which command goes first. Reports the median of each and the
ratio of medians, and the median of per-pair ratios.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
from irscope.capture.session import BOOTSTRAP, CHILD_DIR  # noqa: E402


def _has_gpu() -> bool:
    code = "import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def _timed(cmd, env) -> float:
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err, check=False)
        return time.perf_counter() - t0


def bench(script: str, runs: int, gpu: bool) -> dict:
    base_t, irs_t = [], []
    for i in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, TRITON_ALWAYS_COMPILE="1", MLIR_ENABLE_DUMP="1",
                       TRITON_CACHE_DIR=os.path.join(tmp, "cache"))
            if gpu:
                base_cmd = [sys.executable, script]
            else:
                env.update(IRSCOPE_SPOOL=os.path.join(tmp, "spool"), IRSCOPE_MODE="compile-only", IRSCOPE_HOOK="off",
                           PYTHONPATH=os.pathsep.join([CHILD_DIR, ROOT]))
                os.makedirs(env["IRSCOPE_SPOOL"])
                base_cmd = [sys.executable, BOOTSTRAP, script]
            irs_env = dict(os.environ, PYTHONPATH=ROOT)
            irs_cmd = [sys.executable, "-m", "irscope", "run", script, "-q", "--no-open", "-o", os.path.join(tmp, "b.irscope")]
            order = [(base_cmd, env, base_t), (irs_cmd, irs_env, irs_t)]
            if i % 2:
                order.reverse()
            for cmd, e, sink in order:
                sink.append(_timed(cmd, e))
    ratios = [b / a for a, b in zip(base_t, irs_t)]
    return {
        "script": os.path.basename(script),
        "baseline": "plain python (GPU)" if gpu else "compile-only bootstrap, hook off",
        "runs": runs,
        "baseline_median_s": statistics.median(base_t),
        "irscope_median_s": statistics.median(irs_t),
        "ratio_of_medians": statistics.median(irs_t) / statistics.median(base_t),
        "median_pair_ratio": statistics.median(ratios),
        "baseline_s": base_t,
        "irscope_s": irs_t,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scripts", nargs="+")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--no-gpu-baseline", action="store_true")
    args = ap.parse_args()
    gpu = _has_gpu() and not args.no_gpu_baseline
    results = [bench(os.path.abspath(s), args.runs, gpu) for s in args.scripts]
    for r in results:
        print(f"{r['script']:<24} baseline {r['baseline_median_s']:.2f}s  irscope {r['irscope_median_s']:.2f}s  "
              f"ratio {r['ratio_of_medians']:.3f} (median pair ratio {r['median_pair_ratio']:.3f}, n={r['runs']}, {r['baseline']})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
