"""Peak memory of `irscope run`: the irscope parent (which ingests and stores)
and the script's child process, plus wall time.

    python benchmarks/bench_capture_memory.py [SCRIPT] [--llvm-passes] [--runs 3] [--json OUT]
                                              [--pythonpath DIR] [--keep BUNDLE]

Default: sample_kernels/matmul_autotune.py --llvm-passes, 3 runs, raw output to
docs/data/bench_capture_memory.json.

How: the parent is `python -c <wrapper>` that runs irscope's command line in
process and, at exit, writes its own peak RSS (`VmHWM` from /proc/self/status,
= getrusage's ru_maxrss) to a file: exact, whatever happens between samples.
The child (the interpreter running irscope_bootstrap.py, found among the
parent's descendants) is sampled every 20 ms for its `VmHWM`, the kernel's own
peak mark, so only a rise in the last 20 ms of its life could be missed.
Tools the parent runs (ptxas, nvdisasm, cuobjdump) are separate processes and
counted in neither figure. Each figure is the median of the runs.
`--pythonpath DIR` puts DIR first on PYTHONPATH (an older copy of the package,
for a before/after comparison in one sitting; the wrapper runs in a temporary
folder, so the checkout does not shadow it).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

WRAPPER = r"""
import atexit, sys
PEAK_FILE = sys.argv[1]
def _peak():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                with open(PEAK_FILE, "w") as out:
                    out.write(line.split()[1])
atexit.register(_peak)
sys.argv = ["irscope"] + sys.argv[2:]
from irscope.cli.main import main
rc = main()
_peak()
sys.exit(rc)
"""


def _status_kb(pid: int, field: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    kids = [int(x) for x in f.read().split()]
                out.extend(kids)
                todo.extend(kids)
        except OSError:
            continue
    return out


def _is_child_script(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"irscope_bootstrap.py" in f.read()
    except OSError:
        return False


def one_run(script: str, llvm_passes: bool, pythonpath: str | None, keep: str | None,
            extra: tuple[str, ...] = ()) -> dict:
    """One `irscope run SCRIPT`; `extra` is added to its arguments (`--target sm_90`, `--` and the script's)."""
    with tempfile.TemporaryDirectory() as tmp:
        bundle = os.path.join(tmp, "b.irscope")
        peak_file = os.path.join(tmp, "parent_peak_kb")
        cmd = [sys.executable, "-c", WRAPPER, peak_file, "run", script, "-q", "--no-open", "-o", bundle]
        if llvm_passes:
            cmd.append("--llvm-passes")
        cmd.extend(extra)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (pythonpath, ROOT, env.get("PYTHONPATH")) if p)
        child_peak: dict[int, int] = {}
        t0 = time.perf_counter()
        # cwd: `python -c` puts the working folder first on sys.path, ahead of PYTHONPATH,
        # which would shadow --pythonpath with the checkout's own package.
        proc = subprocess.Popen(cmd, env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        done = threading.Event()

        def sample():
            while not done.is_set():
                for pid in _descendants(proc.pid):
                    if pid in child_peak or _is_child_script(pid):
                        kb = _status_kb(pid, "VmHWM")
                        if kb is not None:
                            child_peak[pid] = max(child_peak.get(pid, 0), kb)
                done.wait(0.02)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, err = proc.communicate()
        wall = time.perf_counter() - t0
        done.set()
        sampler.join()
        if proc.returncode != 0:
            raise SystemExit(f"irscope run failed ({proc.returncode}):\n{err.decode(errors='replace')[-3000:]}")
        with open(peak_file) as f:
            parent_kb = int(f.read())
        if keep:
            shutil.copy(bundle, keep)
    return {"parent_peak_mib": parent_kb / 1024, "child_peak_mib": max(child_peak.values(), default=0) / 1024,
            "wall_s": wall}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("script", nargs="?", default=os.path.join(ROOT, "sample_kernels", "matmul_autotune.py"))
    ap.add_argument("--llvm-passes", action="store_true", default=None)
    ap.add_argument("--no-llvm-passes", dest="llvm_passes", action="store_false")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", default=os.path.join(ROOT, "docs", "data", "bench_capture_memory.json"))
    ap.add_argument("--pythonpath")
    ap.add_argument("--keep", help="copy the last run's bundle here")
    args = ap.parse_args()
    llvm = True if args.llvm_passes is None else args.llvm_passes
    runs = []
    for i in range(args.runs):
        r = one_run(os.path.abspath(args.script), llvm, args.pythonpath, args.keep)
        print(f"run {i + 1}: parent peak {r['parent_peak_mib']:.1f} MiB, child peak {r['child_peak_mib']:.1f} MiB, "
              f"wall {r['wall_s']:.1f} s", flush=True)
        runs.append(r)
    result = {
        "script": os.path.basename(args.script),
        "llvm_passes": llvm,
        "runs": args.runs,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "pythonpath": args.pythonpath,
        "parent_peak_mib_median": statistics.median(r["parent_peak_mib"] for r in runs),
        "child_peak_mib_median": statistics.median(r["child_peak_mib"] for r in runs),
        "wall_s_median": statistics.median(r["wall_s"] for r in runs),
        "per_run": runs,
    }
    print(f"{result['script']}{' --llvm-passes' if llvm else ''}: parent peak {result['parent_peak_mib_median']:.1f} MiB "
          f"({result['parent_peak_mib_median'] * 1.048576:.1f} MB), child peak {result['child_peak_mib_median']:.1f} MiB, "
          f"wall {result['wall_s_median']:.1f} s (median of {args.runs})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
