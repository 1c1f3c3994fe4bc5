"""How fast ``irscope diff`` is, and how it scales.

    python benchmarks/bench_diff.py --old OLD.irscope --new NEW.irscope [--runs 5] [--json FILE]

OLD and NEW hold the same sample scripts captured with two Triton versions (see
the README's cross-version workflow). Figures, each the median of ``--runs``:

* ``attention_llir``: the flash-attention kernel's LLVM IR, old vs new version:
  the structural diff alone (both sides parsed before the clock starts), and
  parse + diff as a cold command pays it.
* ``two_bundles``: ``irscope diff OLD NEW`` as a user runs it (a fresh process,
  wall clock): every kernel paired, with every pair's structural diff of every
  stage (``--json`` output, so the terminal's speed is not measured); the pairs
  run in worker processes by default, and ``--jobs 1`` (one process) is timed in
  the same runs, alternating, as the baseline.
* ``scaling``: one real LLVM-dialect snapshot's functions repeated 1x, 4x and 16x
  (each copy a function of its own), diffed against the same text with one op
  changed per copy; seconds per op should stay flat (linear), never grow with n.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _median(fn, runs: int) -> float:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def attention_llir(old: str, new: str, runs: int) -> dict:
    import irscope
    from irscope.irdiff.engine import diff_modules
    from irscope.ir import parse_stage

    with irscope.open(old) as a, irscope.open(new) as b:
        ta = a.capture("_attn_fwd").stage("llir").text
        tb = b.capture("_attn_fwd").stage("llir").text
        va, vb = a.capture("_attn_fwd").triton_version, b.capture("_attn_fwd").triton_version
    ma, mb = parse_stage("llir", ta), parse_stage("llir", tb)
    d = diff_modules(ma, mb, "llir")  # imports and the type caches warmed, out of the figures
    diff_s, both_s = [], []
    for _ in range(runs):
        # Fresh parses each time: a diff keeps its def-use on the modules it read.
        t = time.perf_counter()
        ma, mb = parse_stage("llir", ta), parse_stage("llir", tb)
        t1 = time.perf_counter()
        diff_modules(ma, mb, "llir")
        t2 = time.perf_counter()
        diff_s.append(t2 - t1)
        both_s.append(t2 - t)
    diff_only, both = statistics.median(diff_s), statistics.median(both_s)
    return {"versions": [va, vb], "ops": [len(ma.all_ops), len(mb.all_ops)], "changes": len(d.changes),
            "diff_s": round(diff_only, 4), "parse_and_diff_s": round(both, 4)}


def two_bundles(old: str, new: str, runs: int) -> dict:
    cmd = [sys.executable, "-m", "irscope", "diff", old, new, "--json"]
    walls, serial = [], []
    out = None
    for _ in range(runs):  # the default (pairs in worker processes), then --jobs 1, alternating
        t = time.perf_counter()
        out = subprocess.run(cmd, check=True, capture_output=True, text=True)
        walls.append(time.perf_counter() - t)
        t = time.perf_counter()
        subprocess.run(cmd + ["--jobs", "1"], check=True, capture_output=True, text=True)
        serial.append(time.perf_counter() - t)
    doc = json.loads(out.stdout)
    return {"pairs": len(doc["pairs"]), "wall_s": round(statistics.median(walls), 3),
            "one_process_wall_s": round(statistics.median(serial), 3), "cpus": os.cpu_count(),
            "changes": sum(sum(p.get("changes", {}).values()) for p in doc["pairs"])}


def _repeat(text: str, n: int, edit: bool) -> str:
    """The module's functions copied n times, renamed; ``edit`` changes one constant per copy."""
    head, _, body = text.partition("llvm.func")
    func = "llvm.func" + body.rsplit("}", 1)[0] + "}"
    copies = []
    for i in range(n):
        f = re.sub(r"@(\w+)", lambda m: f"@{m.group(1)}_{i}", func, count=1)
        if edit:
            f = re.sub(r"llvm\.mlir\.constant\((\d+) : i32\)", lambda m: f"llvm.mlir.constant({int(m.group(1)) + 7} : i32)",
                       f, count=1)
        copies.append(f)
    return head + "\n".join(copies) + "\n}\n"


def scaling(bundle: str, runs: int) -> list[dict]:
    import irscope
    from irscope.irdiff.engine import diff_modules
    from irscope.ir import parse_stage

    with irscope.open(bundle) as b:
        best = None
        for cap in b.captures():
            for row in cap.pass_rows():
                if row.kind == "mlir" and row.stage == "llir" and (best is None or row.size > best[0]):
                    text = cap._pass_text(row.blob)
                    if "llvm.func" in text:
                        best = (row.size, text)
    text = best[1]
    out = []
    for n in (1, 4, 16):
        a = parse_stage("mlir", _repeat(text, n, False))
        b2 = parse_stage("mlir", _repeat(text, n, True))
        ops = len(a.all_ops)
        secs = _median(lambda: diff_modules(a, b2, "mlir"), runs)
        d = diff_modules(a, b2, "mlir")
        out.append({"copies": n, "ops": ops, "changes": len(d.changes), "diff_s": round(secs, 4),
                    "us_per_op": round(secs / ops * 1e6, 2)})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    res = {"attention_llir": attention_llir(args.old, args.new, args.runs),
           "two_bundles": two_bundles(args.old, args.new, args.runs),
           "scaling": scaling(args.old, max(3, args.runs // 2))}
    a = res["attention_llir"]
    print(f"attention LLIR {a['versions'][0]} -> {a['versions'][1]} ({a['ops'][0]} / {a['ops'][1]} ops, "
          f"{a['changes']} changes): diff {a['diff_s']} s, parse + diff {a['parse_and_diff_s']} s")
    t = res["two_bundles"]
    print(f"two bundles ({t['pairs']} pairs, {t['changes']} changes): {t['wall_s']} s wall, fresh process "
          f"({t['one_process_wall_s']} s with --jobs 1; {t['cpus']} CPUs)")
    for s in res["scaling"]:
        print(f"scaling {s['copies']:>2}x: {s['ops']} ops, {s['changes']} changes, {s['diff_s']} s, "
              f"{s['us_per_op']} us/op")
    if args.json:
        res["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "platform": platform.platform()}
        res["method"] = f"median of {args.runs} runs; see benchmarks/bench_diff.py"
        Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
