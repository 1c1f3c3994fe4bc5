"""What compile-only runs' tensors cost: irscope's design (torch's fake tensors, plus a
do-nothing CUDA device guard, ``torch.cuda`` queries from a table and custom operators
run for real: irscope/capture/child/irscope_fake_tensors.py) against plain fake
tensors, and against the floor of the alternative, host-memory-backed stand-in CUDA
tensors with real data.

    git worktree add --detach /tmp/old_fake 3325628^      # plain FakeTensorMode, no guard
    python benchmarks/bench_compile_only_tensors.py [--runs 3] [--old-tree /tmp/old_fake]
                                                    [--part samples|model|both] [--samples NAME ...]
                                                    [--json OUT]

Two parts (raw output to docs/data/bench_compile_only_tensors.json):

- **samples**: ``irscope run SAMPLE --target sm_90`` of every script in
  sample_kernels/ with this checkout's package and with the old tree's (put first on
  PYTHONPATH), interleaved per sample (old/new, then new/old in the next round).
  Figures: wall time of the whole ``irscope run`` and the peak RSS (``VmHWM``) of the
  child process that runs the script, medians of ``--runs``, per sample and summed,
  and the ratio new/old measured in the same sitting. The bundles of the last run of
  each tree are opened to check that both captured the same kernels.
- **model**: benchmarks/large_model.py (8 layers of hidden 4096 / MLP 16384 in bf16:
  1.61 G parameters, 3.0 GiB of weights; a forward over 4 x 128 tokens; one Triton
  kernel) (i) under ``irscope run --target sm_90`` with this checkout, (ii) the same
  script with ``--layers 0`` (the model gone: what the run costs without it), and
  (iii) ``python benchmarks/large_model.py --device cpu``: the torch part on real
  tensors in host memory (real random init, the same forward), which is the floor of
  what host-backed stand-in tensors would cost. Its peak RSS is the process's own
  (``wait4``'s ``ru_maxrss``), its time the whole process's. One run of (i) with the
  old tree records whether plain fake tensors run the script at all.

Timings on a shared machine are noisy: every figure is a median, old and new runs
alternate, and each run is recorded in the JSON. Measurement code is
benchmarks/bench_capture_memory.py's (``one_run``: the parent's and the child's
peak RSS, wall time).
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)
from bench_capture_memory import one_run  # noqa: E402  (benchmarks/ is not a package)

TARGET = ("--target", "sm_90")
MODEL = os.path.join(HERE, "large_model.py")


@dataclass
class Run:
    """One process measured."""

    wall_s: float
    child_peak_mib: float  # the process that ran the script (the irscope child, or plain python)
    parent_peak_mib: float | None = None  # irscope's own process, when there is one
    script: dict = field(default_factory=dict)  # large_model.py's own figures (--timings)


def _med(runs: list[Run], attr: str) -> float:
    return statistics.median(getattr(r, attr) for r in runs)


def _irscope_run(script: str, pythonpath: str | None, extra: tuple[str, ...] = (), keep: str | None = None) -> Run:
    r = one_run(script, False, pythonpath, keep, TARGET + extra)
    return Run(r["wall_s"], r["child_peak_mib"], r["parent_peak_mib"])


def _count_captures(bundle: str) -> dict:
    """Kernels and captures in a bundle (read with this checkout's core)."""
    import irscope

    b = irscope.open(bundle)
    try:
        caps = b.captures()
        return {"captures": len(caps), "failed": sum(1 for c in caps if c.failed), "kernels": b.kernels()}
    finally:
        b.close()


def bench_samples(old_tree: str, runs: int, only: list[str] | None = None) -> dict:
    """Every sample (or those named in ``only``) under both trees, interleaved; medians, sums and ratios."""
    samples = sorted(n for n in os.listdir(os.path.join(ROOT, "sample_kernels"))
                     if n.endswith(".py") and n != "__init__.py" and (not only or n in only))
    trees = {"old": old_tree, "new": None}
    for name, path in trees.items():  # warm-up (file caches, the guard library), not recorded
        _irscope_run(os.path.join(ROOT, "sample_kernels", "vector_add.py"), path)
    per: dict[str, dict[str, list[Run]]] = {s: {"old": [], "new": []} for s in samples}
    kept: dict[str, dict[str, dict]] = {s: {} for s in samples}
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(runs):
            for i, sample in enumerate(samples):
                order = ("old", "new") if (rnd + i) % 2 == 0 else ("new", "old")
                for name in order:
                    last = rnd == runs - 1
                    keep = os.path.join(tmp, f"{name}_{sample}.irscope") if last else None
                    r = _irscope_run(os.path.join(ROOT, "sample_kernels", sample), trees[name], keep=keep)
                    per[sample][name].append(r)
                    if keep:
                        kept[sample][name] = _count_captures(keep)
                    print(f"round {rnd + 1} {sample:22} {name}: {r.wall_s:6.2f} s, child {r.child_peak_mib:6.1f} MiB",
                          flush=True)
    out: dict = {"samples": {}, "old_tree": old_tree, "old_commit": _commit(old_tree), "runs": runs}
    tot = {k: {"wall_s": 0.0, "child_peak_mib": 0.0} for k in ("old", "new")}
    for sample in samples:
        row: dict = {}
        for name in ("old", "new"):
            rs = per[sample][name]
            row[name] = {"wall_s_median": _med(rs, "wall_s"), "child_peak_mib_median": _med(rs, "child_peak_mib"),
                         "parent_peak_mib_median": _med(rs, "parent_peak_mib"), "captured": kept[sample][name],
                         "per_run": [asdict(r) for r in rs]}
            tot[name]["wall_s"] += row[name]["wall_s_median"]
            tot[name]["child_peak_mib"] += row[name]["child_peak_mib_median"]
        row["wall_ratio"] = row["new"]["wall_s_median"] / row["old"]["wall_s_median"]
        row["child_peak_ratio"] = row["new"]["child_peak_mib_median"] / row["old"]["child_peak_mib_median"]
        row["same_captures"] = kept[sample]["old"] == kept[sample]["new"]
        out["samples"][sample] = row
    # Per round: the sum over samples of new / old (both measured in that round).
    round_ratios = [sum(per[s]["new"][k].wall_s for s in samples) / sum(per[s]["old"][k].wall_s for s in samples)
                    for k in range(runs)]
    out["total"] = {
        "old_wall_s": tot["old"]["wall_s"], "new_wall_s": tot["new"]["wall_s"],
        "wall_ratio": tot["new"]["wall_s"] / tot["old"]["wall_s"],
        "wall_ratio_per_round": round_ratios, "wall_ratio_median_of_rounds": statistics.median(round_ratios),
        "child_peak_ratio_max": max(out["samples"][s]["child_peak_ratio"] for s in samples),
        "child_peak_ratio_mean": statistics.mean(out["samples"][s]["child_peak_ratio"] for s in samples),
    }
    return out


def _host_floor(extra: tuple[str, ...]) -> Run:
    """large_model.py on real host tensors in a plain python process."""
    with tempfile.TemporaryDirectory() as tmp:
        timings = os.path.join(tmp, "t.json")
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, MODEL, "--device", "cpu", "--timings", timings, *extra],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"large_model.py --device cpu failed:\n{err.decode(errors='replace')[-3000:]}")
        with open(timings) as f:
            script = json.load(f)
    return Run(wall, usage.ru_maxrss / 1024, None, script)


def _compile_only(extra: tuple[str, ...]) -> Run:
    with tempfile.TemporaryDirectory() as tmp:
        timings = os.path.join(tmp, "t.json")
        r = _irscope_run(MODEL, None, ("--", "--timings", timings, *extra))
        with open(timings) as f:
            r.script = json.load(f)
    return r


def model_under_old_tree(old_tree: str) -> dict:
    """One compile-only run of large_model.py with the old tree's plain fake tensors:
    whether it runs, and irscope's one-line error when it does not."""
    try:
        r = _irscope_run(MODEL, old_tree)
    except SystemExit as exc:  # one_run's way of saying the run failed: its stderr
        errors = [ln for ln in str(exc).splitlines() if ln.startswith("irscope: error")]
        return {"ok": False, "error": errors[-1] if errors else str(exc)[-300:]}
    return {"ok": True, "wall_s": r.wall_s, "child_peak_mib": r.child_peak_mib}


def bench_model(runs: int) -> dict:
    """The large model: compile-only, compile-only without the model, host floor; interleaved."""
    cases = {
        "compile_only": lambda: _compile_only(()),
        "compile_only_no_layers": lambda: _compile_only(("--layers", "0")),
        "host_floor": lambda: _host_floor(()),
    }
    per: dict[str, list[Run]] = {k: [] for k in cases}
    for rnd in range(runs):
        for name, fn in cases.items():
            r = fn()
            per[name].append(r)
            print(f"round {rnd + 1} model {name:24}: {r.wall_s:6.2f} s, peak {r.child_peak_mib:7.1f} MiB "
                  f"(build {r.script['build_s']:.2f} s, forward {r.script['forward_s']:.2f} s)", flush=True)
    out: dict = {}
    for name, rs in per.items():
        out[name] = {
            "wall_s_median": _med(rs, "wall_s"), "peak_mib_median": _med(rs, "child_peak_mib"),
            "build_s_median": statistics.median(r.script["build_s"] for r in rs),
            "forward_s_median": statistics.median(r.script["forward_s"] for r in rs),
            "model": {k: rs[0].script[k] for k in ("layers", "hidden", "ffn", "heads", "batch", "seq", "parameters",
                                                    "weight_gib", "forward_gflop")},
            "per_run": [asdict(r) for r in rs],
        }
    co, host = out["compile_only"], out["host_floor"]
    out["host_over_compile_only"] = {"wall": host["wall_s_median"] / co["wall_s_median"],
                                     "peak_rss": host["peak_mib_median"] / co["peak_mib_median"]}
    return out


def _commit(tree: str) -> str:
    p = subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return p.stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--old-tree", default="/tmp/old_fake", help="a checkout with plain fake tensors (3325628^)")
    ap.add_argument("--part", choices=("samples", "model", "both"), default="both")
    ap.add_argument("--samples", nargs="*", help="only these sample files (vector_add.py ...)")
    ap.add_argument("--json", default=os.path.join(ROOT, "docs", "data", "bench_compile_only_tensors.json"))
    args = ap.parse_args()
    result: dict = {}
    if args.part != "both" and os.path.exists(args.json):  # one part re-measured: keep the other
        with open(args.json) as f:
            result = json.load(f)
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "irscope/capture"],
                           capture_output=True, text=True).stdout.strip()
    result["machine"] = {"cpus": os.cpu_count(), "python": sys.version.split()[0], "platform": platform.platform(),
                         "load_at_start": os.getloadavg()}
    result["new_commit"] = _commit(ROOT) + (" + uncommitted irscope/capture changes" if dirty else "")
    if args.part in ("samples", "both"):
        result["samples"] = bench_samples(os.path.abspath(args.old_tree), args.runs, args.samples)
        t = result["samples"]["total"]
        print(f"samples: old {t['old_wall_s']:.1f} s, new {t['new_wall_s']:.1f} s: {t['wall_ratio']:.3f}x "
              f"(median of rounds {t['wall_ratio_median_of_rounds']:.3f}x); child peak ratio max "
              f"{t['child_peak_ratio_max']:.3f}x")
    if args.part in ("model", "both"):
        result["model"] = bench_model(args.runs)
        result["model"]["old_tree"] = model_under_old_tree(os.path.abspath(args.old_tree))
        m = result["model"]
        print(f"model: compile-only {m['compile_only']['wall_s_median']:.1f} s / "
              f"{m['compile_only']['peak_mib_median']:.0f} MiB; host floor {m['host_floor']['wall_s_median']:.1f} s / "
              f"{m['host_floor']['peak_mib_median']:.0f} MiB")
    result["load_at_end"] = os.getloadavg()
    with open(args.json, "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
