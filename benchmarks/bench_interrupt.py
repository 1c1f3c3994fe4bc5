"""Ctrl-C during a long compile: seconds from SIGINT to `irscope run` exiting.

    python benchmarks/bench_interrupt.py [SCRIPT] [--runs 5] [--after 4 6 8] [--json OUT]

Runs ``irscope run SCRIPT --llvm-passes`` (default: sample_kernels/matmul_autotune.py,
several seconds per config with every LLVM pass dumped) in its own session, as
a terminal's foreground job, waits until the first capture is in the bundle
plus ``--after`` seconds (so the signal lands inside a later config's compile),
then sends SIGINT to the job's whole process group, the way a terminal's Ctrl-C
does, and times until the process exits. Reports each run (delay, seconds to
exit, exit code, captures kept) and the median seconds to exit.
"""

import argparse
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _captures(bundle: str) -> int:
    if not os.path.exists(bundle):
        return 0
    try:
        with sqlite3.connect(f"file:{bundle}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute("SELECT count(*) FROM captures").fetchone()[0]
    except sqlite3.Error:
        return 0


def one_run(script: str, after: float, extra: list[str], timeout: float = 120) -> dict:
    with tempfile.TemporaryDirectory(prefix="irscope-bench-int-") as tmp:
        bundle = os.path.join(tmp, "b.irscope")
        cmd = [sys.executable, "-m", "irscope", "run", script, "--llvm-passes", "-o", bundle, "-q", "--no-open", *extra]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)
        t_start = time.perf_counter()
        while _captures(bundle) == 0 and proc.poll() is None and time.perf_counter() - t_start < 300:
            time.sleep(0.05)
        time.sleep(after)
        if proc.poll() is not None:
            return {"after": after, "finished_before_signal": True, "exit_code": proc.returncode}
        kept_before = _captures(bundle)
        t0 = time.perf_counter()
        os.killpg(proc.pid, signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
            return {"after": after, "seconds_to_exit": None, "timed_out_s": timeout,
                    "captures_before_signal": kept_before, "captures_kept": _captures(bundle)}
        seconds = time.perf_counter() - t0
        # Whatever the job left behind (a child that outlived it would show here).
        try:
            os.killpg(proc.pid, 0)
            leftover = True
        except OSError:
            leftover = False
        return {"after": after, "seconds_to_exit": round(seconds, 3), "exit_code": proc.returncode,
                "captures_before_signal": kept_before, "captures_kept": _captures(bundle),
                "leftover_processes": leftover, "stderr_tail": err.decode("utf-8", "replace").strip()[-300:]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("script", nargs="?", default=os.path.join(ROOT, "sample_kernels", "matmul_autotune.py"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--after", type=float, nargs="+", default=[0.5, 1.5, 2.5, 3.5, 4.5],
                    help="seconds after the first capture to send SIGINT (cycled over the runs)")
    ap.add_argument("--timeout", type=float, default=120, help="give up on a run after this many seconds")
    ap.add_argument("--json", metavar="OUT")
    args, extra = ap.parse_known_args()
    results = []
    for i in range(args.runs):
        r = one_run(args.script, args.after[i % len(args.after)], extra, args.timeout)
        results.append(r)
        print(json.dumps(r), flush=True)
    secs = [r["seconds_to_exit"] for r in results if r.get("seconds_to_exit") is not None]
    summary = {"script": os.path.relpath(args.script, ROOT), "runs": len(results),
               "timed_out": sum(1 for r in results if "timed_out_s" in r),
               "median_s": round(statistics.median(secs), 3) if secs else None,
               "max_s": round(max(secs), 3) if secs else None, "min_s": round(min(secs), 3) if secs else None}
    print(json.dumps(summary))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "runs": results}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
