"""Time ``irscope export``: stage graphs of the samples, and big LLVM-dialect snapshots
folded (``--max-nodes``) versus drawn MLIR-style, every op and every edge.

    python benchmarks/bench_export.py [--bundle tests/data/samples_sm90.irscope] [--runs 3] [--timeout 300]

Each run opens the bundle afresh (so parsing is in the time), builds the graph with
:func:`irscope.export.stage_graph` and renders SVG with the real ``dot``. Reported
per case, median of the runs: the whole export, the part in Python (read, parse,
build, DOT) and the part in ``dot``; nodes and edges drawn. Cases:

1. every sample capture's TTGIR (default options);
2. the largest LLVM-dialect pass snapshot in the bundle (found by op count) with
   the default ``--max-nodes 300`` and with ``--max-nodes 0`` (every op);
3. the LLVM-dialect snapshot nearest 5,000 ops (MLIR's ``--view-op-graph``
   anchor: 33-35 s for a 5,000-op function), every op and every edge versus
   ``--max-nodes 300``: the baseline is measured in the same run.

4. the command a user types for the largest snapshot, ``irscope export BUNDLE
   KERNEL --pass N -o x.svg`` (the pass that produced it, so the diff engine's
   colouring is in the time), as a whole process;
5. ``pipeline``: the size of the pass-pipeline picture (``--pipeline``) of every
   capture with passes in the bundle and in ``tests/data/learner_sm90.irscope``:
   width x height as dot lays it out (points; px at 96 dpi = pt x 4/3), its
   columns and the rows of the longest. Goal: it fits a 2560 x 1440 px screen
   (<= 1920 x 1080 pt), laid out for 1920 x 1200 px.

A ``dot`` run past ``--timeout`` seconds is reported as such (and not repeated).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import irscope
from irscope.errors import IrscopeError
from irscope.export import stage_graph
from irscope.export.opgraph import module_graph
from irscope.export.render import run_dot, to_dot


def _once(bundle: str, cap_id: int, *, stage: str | None, snapshot: int | None, max_nodes: int | None,
          timeout: float) -> dict:
    t0 = time.perf_counter()
    with irscope.open(bundle) as b:
        cap = b.capture(f"#{cap_id}")
        if snapshot is not None:  # the snapshot itself, as `--pass` would draw it, without the diff
            g = module_graph(cap.pass_at(snapshot).module, title="bench", file=cap.row.file, max_nodes=max_nodes)
        else:
            g = stage_graph(cap, stage, max_nodes=max_nodes)
        source = to_dot(g)
    t1 = time.perf_counter()
    try:
        svg = run_dot(source, "svg", timeout=timeout)
        size, timed_out = len(svg), False
    except IrscopeError:
        size, timed_out = 0, True
    t2 = time.perf_counter()
    return {"total_s": t2 - t0, "python_s": t1 - t0, "dot_s": t2 - t1, "nodes": g.nodes, "edges": g.edges,
            "ops": g.ops_total, "svg_bytes": size, "timed_out": timed_out}


def measure(bundle: str, cap_id: int, runs: int, timeout: float, **kw) -> dict:
    got = []
    for _ in range(runs):
        r = _once(bundle, cap_id, timeout=timeout, **kw)
        got.append(r)
        if r["timed_out"]:
            break
    out = {k: statistics.median(r[k] for r in got) for k in ("total_s", "python_s", "dot_s")}
    out |= {k: got[0][k] for k in ("nodes", "edges", "ops", "svg_bytes")}
    out |= {"timed_out": any(r["timed_out"] for r in got), "runs": len(got)}
    return out


def llvm_snapshots(bundle: str) -> list[tuple[int, int, int]]:
    """(ops, capture id, pass index) of every LLVM-dialect snapshot (MLIR snapshots of
    the llir stage after convert-triton-gpu-to-llvm), by the pass list's op counts."""
    out = []
    with irscope.open(bundle) as b:
        for cap in b.captures():
            passes = cap.passes()
            for p, nxt in pairwise(passes):
                if nxt.stage == "llir" and nxt.kind == "mlir" and p.step.forms.ops_by_dialect.get("llvm", 0) > p.step.ops_after / 2:
                    out.append((p.step.ops_after, cap.id, nxt.index))
    return sorted(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", default=str(ROOT / "tests" / "data" / "samples_sm90.irscope"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds allowed to one dot run")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--cases", default="ttgir,folded,every,cli,pipeline",
                    help="which cases to run: ttgir, folded (--max-nodes 300), every (--max-nodes 0), cli, "
                         "pipeline (picture sizes); every-5k: only the 5,000-op snapshot drawn every op")
    args = ap.parse_args()
    res: dict = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
                 "load": os.getloadavg(), "runs": args.runs, "timeout_s": args.timeout, "ttgir": [], "llvm": []}
    cases = set(args.cases.split(","))
    with irscope.open(args.bundle) as b:
        caps = [(c.id, c.kernel, c.variant) for c in b.captures()] if "ttgir" in cases else []
    for cid, kernel, variant in caps:
        r = measure(args.bundle, cid, args.runs, args.timeout, stage="ttgir", snapshot=None, max_nodes=None)
        res["ttgir"].append({"capture": cid, "kernel": kernel, "variant": variant} | r)
        print(f"ttgir #{cid} {kernel}: {r['ops']} ops -> {r['nodes']} nodes {r['edges']} edges, "
              f"{r['total_s']:.2f} s (python {r['python_s']:.2f}, dot {r['dot_s']:.2f})", flush=True)
    if "pipeline" in cases:
        res["pipeline"] = pipeline_sizes([args.bundle, str(ROOT / "tests" / "data" / "learner_sm90.irscope")])
    if not cases & {"folded", "every", "every-5k", "cli"}:
        return _done(res, args.json)
    snaps = llvm_snapshots(args.bundle)
    largest = snaps[-1]
    near5k = min(snaps, key=lambda s: (abs(s[0] - 5000), -s[0]))
    for label, (ops, cid, index) in (("largest", largest), ("near 5,000 ops", near5k)):
        wanted = [m for m, case in ((300, "folded"), (0, "every")) if case in cases]
        if label != "largest" and "every-5k" in cases:  # the baseline alone, e.g. with a longer --timeout
            wanted = [0]
        for max_nodes in wanted:
            r = measure(args.bundle, cid, args.runs if max_nodes else min(args.runs, 3), args.timeout,
                        stage=None, snapshot=index, max_nodes=max_nodes)
            res["llvm"].append({"case": label, "capture": cid, "snapshot": index, "max_nodes": max_nodes} | r)
            what = "every op, every edge" if max_nodes == 0 else f"--max-nodes {max_nodes}"
            state = f"dot past {args.timeout:g} s" if r["timed_out"] else f"{r['total_s']:.2f} s"
            print(f"{label}: #{cid} snapshot {index} ({r['ops']} ops), {what}: {r['nodes']} nodes {r['edges']} edges, "
                  f"{state} (python {r['python_s']:.2f}, dot {r['dot_s']:.2f})", flush=True)
    ops, cid, index = largest
    if "cli" not in cases:
        args.runs = 0
    with irscope.open(args.bundle) as b:
        kernel = b.capture(f"#{cid}").kernel
    walls = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.runs):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "irscope", "export", args.bundle, f"#{cid}", "--pass", str(index - 1),
                            "-o", os.path.join(tmp, "x.svg")], check=True, capture_output=True, cwd=ROOT)
            walls.append(time.perf_counter() - t)
    if walls:
        res["cli"] = {"capture": cid, "kernel": kernel, "pass": index - 1, "ops": ops, "runs": args.runs,
                      "wall_s": statistics.median(walls), "walls": walls}
        print(f"cli: irscope export BUNDLE #{cid} --pass {index - 1} -o x.svg ({ops} ops): "
              f"{statistics.median(walls):.2f} s median of {args.runs}", flush=True)
    return _done(res, args.json)


def _done(res: dict, path: str | None) -> int:
    res["load_after"] = os.getloadavg()
    if path:
        Path(path).write_text(json.dumps(res, indent=2))
    return 0


def pipeline_sizes(bundles: list[str]) -> list[dict]:
    """Width x height (pt) of the pipeline picture of every capture with passes."""
    import xml.etree.ElementTree as ET

    from irscope.export import pipeline_graph
    from irscope.export.render import render

    out = []
    for path in bundles:
        with irscope.open(path) as b:
            for cap in b.captures():
                if not cap.pass_count:
                    continue
                g = pipeline_graph(cap)
                root = ET.fromstring(render(g, "svg"))
                w, h = float(root.get("width", "0pt")[:-2]), float(root.get("height", "0pt")[:-2])
                cols = g.graph.graph["columns"]
                r = {"bundle": Path(path).name, "capture": cap.id, "kernel": cap.kernel, "passes": g.ops_total,
                     "width_pt": w, "height_pt": h, "columns": len(cols), "rows": max(len(c) for c in cols)}
                out.append(r)
                print(f"pipeline {r['bundle']} #{cap.id} {cap.kernel}: {g.ops_total} passes, {w:.0f} x {h:.0f} pt "
                      f"({w * 4 / 3:.0f} x {h * 4 / 3:.0f} px), {r['columns']} columns of up to {r['rows']}",
                      flush=True)
    return out


if __name__ == "__main__":
    raise SystemExit(main())
