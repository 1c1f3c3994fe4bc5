"""``irscope profile import`` and ``irscope hot`` as whole processes, on the real H200
profiles of tests/data/profiles.

    python benchmarks/bench_profile.py [--runs 5] [--json FILE]

For each sample (vector_add ... flash_attention, whose ``_attn_fwd`` STAGE=3 variant is
2,288 SASS instructions and whose export holds 3,680 instruction rows): the wall time of

* **import**: ``python -m irscope profile import BUNDLE #ID sass.csv`` into a fresh copy
  of the GPU capture (parse the export, check its SASS against the capture's, attach);
* **import by name**: ``profile import BUNDLE KERNEL sass.csv``, the held-out command: every
  launch of that name checked against every variant of the kernel;
* **hot**: ``python -m irscope hot BUNDLE #ID --json`` on the bundle so made (charge
  the samples to the lines and lay them over the SASS ops), and ``--stage llir`` (the
  largest stage).

Interpreter start included, beside a bare ``python -c pass``. Goal <= 1 s each.
Medians of ``--runs``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "tests" / "data" / "profiles"
# (sample, capture id): every capture sass.csv holds launches of.
# The kernel of each sample: the held-out command imports by name, which checks every
# launch of that name against every variant of the capture.
KERNELS = {"vector_add": "add_kernel", "fused_softmax": "softmax_kernel", "jit_helper_call": "bias_gelu_rowsum_kernel",
           "layer_norm": "_layer_norm_fwd_fused", "flash_attention": "_attn_fwd", "matmul_autotune": "matmul_kernel"}
CASES = (("vector_add", 1), ("fused_softmax", 1), ("jit_helper_call", 1), ("layer_norm", 1),
         ("flash_attention", 1), ("flash_attention", 2), ("matmul_autotune", 1))


def _wall(cmd: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=ROOT)
    return time.perf_counter() - t


def _rows(csv: Path) -> int:
    with open(csv) as fh:
        return sum(1 for ln in fh if ln.startswith('"0x'))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="0")
    py = [sys.executable, "-m", "irscope"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, cid in CASES:
            src = PROFILES / name
            csv = src / "sass.csv"
            imports, bundle = [], ""
            for i in range(args.runs + 1):  # the first run writes the .pyc files
                bundle = os.path.join(tmp, f"{name}.{cid}.{i}.irscope")
                shutil.copy(src / "gpu.irscope", bundle)
                wall = _wall([*py, "profile", "import", bundle, f"#{cid}", str(csv)], env)
                if i:
                    imports.append(wall)
            by_name = []
            for i in range(args.runs):
                named = os.path.join(tmp, f"{name}.{cid}.{i}.named.irscope")
                shutil.copy(src / "gpu.irscope", named)
                by_name.append(_wall([*py, "profile", "import", named, KERNELS[name], str(csv)], env))
            hot = [_wall([*py, "hot", bundle, f"#{cid}", "--json"], env) for _ in range(args.runs)]
            hot_llir = [_wall([*py, "hot", bundle, f"#{cid}", "--stage", "llir", "--json"], env)
                        for _ in range(args.runs)]
            out = subprocess.run([*py, "hot", bundle, f"#{cid}", "--json"], check=True, capture_output=True,
                                 text=True, env=env, cwd=ROOT)
            got = json.loads(out.stdout)
            sass = subprocess.run([*py, "cat", bundle, f"#{cid}", "--stage", "sass"], check=True,
                                  capture_output=True, text=True, env=env, cwd=ROOT).stdout
            row = {"sample": name, "capture": cid, "export_rows": _rows(csv),
                   "sass_instructions": sum(1 for ln in sass.splitlines() if ln.strip().startswith("/*")),
                   "total_samples": got["total_samples"], "import": statistics.median(imports),
                   "import_by_name": statistics.median(by_name),
                   "hot": statistics.median(hot), "hot_llir": statistics.median(hot_llir)}
            rows.append(row)
            print(f"{name} #{cid}: {row['sass_instructions']} SASS instructions, export {row['export_rows']} rows: "
                  f"import {row['import']:.3f} s (by name {row['import_by_name']:.3f} s), hot {row['hot']:.3f} s, hot --stage llir {row['hot_llir']:.3f} s",
                  flush=True)
    bare = statistics.median(_wall([sys.executable, "-c", "pass"], env) for _ in range(args.runs))
    res = {"runs": args.runs, "cases": rows, "max_import": max(max(r["import"], r["import_by_name"]) for r in rows),
           "max_hot": max(max(r["hot"], r["hot_llir"]) for r in rows), "bare_python": bare,
           "python": platform.python_version(), "machine": platform.node(), "cpus": os.cpu_count(),
           "load": os.getloadavg()[0]}
    print(f"slowest: import {res['max_import']:.3f} s, hot {res['max_hot']:.3f} s (goal <= 1 s each); "
          f"bare python {bare:.3f} s; load {res['load']:.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
