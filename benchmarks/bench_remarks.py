"""What recording Triton's remarks costs a capture: `irscope run SCRIPT` (remarks on,
MLIR_ENABLE_DIAGNOSTICS=remarks in the child, the default) against
`irscope run SCRIPT --no-remarks` (the capture as it is without them), in paired
runs of the same code, interleaved, the order inside each pair alternating.

    python benchmarks/bench_remarks.py SCRIPT [SCRIPT...] [--runs 7] [--json OUT] [-- SCRIPT_ARGS]

Reports the median wall time of each, the ratio of medians and the median of
per-pair ratios, and how many remarks the bundles hold (so a run where Triton
printed none is seen as such). Each run gets a fresh bundle and spool; irscope
gives every compile a private Triton cache, so nothing is reused between runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _timed(cmd: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=ROOT)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    took = time.perf_counter() - t0
    if p.returncode not in (0, 4):  # 4: a compile failed (kept in the bundle), as the script intends
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return took


def _bundle_figures(bundle: str) -> tuple[int, list[str], float]:
    """(remarks stored, the captures' remark states, the sum of their compile times)."""
    con = sqlite3.connect(bundle)
    try:
        n = con.execute("SELECT count(*) FROM remarks").fetchone()[0]
        states = [r[0] for r in con.execute("SELECT DISTINCT remarks FROM captures")]
        compile_s = con.execute("SELECT coalesce(sum(compile_seconds), 0) FROM captures").fetchone()[0]
    finally:
        con.close()
    return n, states, compile_s


def bench(script: str, runs: int, script_args: list[str]) -> dict:
    on_t: list[float] = []
    off_t: list[float] = []
    counts: dict[str, tuple[int, list[str], float]] = {}
    compile_s: dict[str, list[float]] = {"on": [], "off": []}
    for i in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            def cmd(name: str, *flags: str) -> list[str]:
                return [sys.executable, "-m", "irscope", "run", script, "-q", "--no-open",
                        "-o", os.path.join(tmp, f"{name}.irscope"), *flags, "--", *script_args]
            order = [("on", cmd("on"), on_t), ("off", cmd("off", "--no-remarks"), off_t)]
            if i % 2:
                order.reverse()
            for name, c, sink in order:
                sink.append(_timed(c))
                counts[name] = _bundle_figures(os.path.join(tmp, f"{name}.irscope"))
                compile_s[name].append(counts[name][2])
    ratios = [a / b for a, b in zip(on_t, off_t)]
    return {
        "script": os.path.relpath(script, ROOT),
        "runs": runs,
        "remarks_on_median_s": statistics.median(on_t),
        "remarks_off_median_s": statistics.median(off_t),
        "ratio_of_medians": statistics.median(on_t) / statistics.median(off_t),
        "median_pair_ratio": statistics.median(ratios),
        "remarks_stored": {k: v[0] for k, v in counts.items()},
        "capture_states": {k: v[1] for k, v in counts.items()},
        "remarks_on_s": on_t,
        "remarks_off_s": off_t,
        # Triton's compile time alone (the hook's timer around each compile), summed over the
        # run's captures: what the variable could cost inside the compiler, without the
        # process start, the script and the ingest.
        "compile_on_median_s": statistics.median(compile_s["on"]),
        "compile_off_median_s": statistics.median(compile_s["off"]),
        "compile_ratio_of_medians": statistics.median(compile_s["on"]) / statistics.median(compile_s["off"]),
        "compile_on_s": compile_s["on"],
        "compile_off_s": compile_s["off"],
    }


def main() -> None:
    argv = sys.argv[1:]
    script_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1:]
    ap = argparse.ArgumentParser()
    ap.add_argument("scripts", nargs="+")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    results = [bench(os.path.abspath(s), args.runs, script_args) for s in args.scripts]
    for r in results:
        print(f"{r['script']:<36} remarks on {r['remarks_on_median_s']:.2f}s  off {r['remarks_off_median_s']:.2f}s  "
              f"ratio {r['ratio_of_medians']:.3f} (median pair ratio {r['median_pair_ratio']:.3f}, n={r['runs']}; "
              f"remarks stored {r['remarks_stored']}); compile alone {r['compile_on_median_s']:.2f}s vs "
              f"{r['compile_off_median_s']:.2f}s, ratio {r['compile_ratio_of_medians']:.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
