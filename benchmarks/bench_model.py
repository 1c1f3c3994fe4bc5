"""The IR model on top of a parse: def-use and every type and encoding decoded.

    python benchmarks/bench_model.py [--bundle out/samples.irscope] [--runs 9] [--json FILE]

Cases: the largest TTGIR stage text in the bundle, and its largest LLVM-dialect
pass snapshot (an MLIR snapshot holding ``llvm.func``: the ``llir`` stage's passes).
Each run is a fresh subprocess (the type and encoding readers memoise by text, so a
second run in one process would be warm), and measures, on one CPU clock:

* ``parse``: ``parse_stage`` of the text (what every view pays first);
* ``model``: def-use of every function (values, uses, result types), then every
  op's types parsed (``op.signature``) and every tensor/memdesc type's encoding
  decoded, plus every alias of the module decoded. A stage file's ops read their
  operands, types and attributes on first use (the parse leaves them unread:
  docs/architecture.md), and the model needs them, so ``model`` includes that
  read (def-use does it first, for all the function's ops at once, as it does for
  any caller); it is also timed apart (``details``, on a second parse of the text
  in the same process: the read memoises nothing).

The parsers and the model's modules are imported before the clock (until this
session the MLIR parser loaded inside the timed parse, which flattered the ratio).

The cyclic collector: the parse pauses it (``text_guard.paused_gc``), so the collections
its allocations trigger, and those the imports left pending, run at the next
allocation after it, which falls in the model. Which phase pays for the imports'
full collection then depends on allocation counts, not on the code timed: a script
that differed only in what it imported measured the same model at 1.2x and 1.6x.
So by default (``--gc settled``) the imports' collections run before the clock
(``gc.collect()``, as the imports themselves are outside it) and each phase ends
with ``gc.collect(1)`` inside its own clock: each pays, once, for collecting what it
allocated. ``--gc as-is`` measures without either (the "collections as-is" figure).
Ratios reported: model / parse (the goal's), (model - details) / parse, and
(model - details) / (parse + details), the last taking the whole parse, the lazy one
plus the details it defers, as the baseline.

Reported: the median of each over the runs, and the median of the within-run
ratios model/parse (the goal is <= 1x).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def pick_texts(bundle: str) -> dict[str, tuple[str, str]]:
    """name -> (parse stage, text) of the largest TTGIR and LLVM-dialect snapshot."""
    import irscope

    best: dict[str, tuple[int, str, str]] = {}
    with irscope.open(bundle) as b:
        for cap in b.captures():
            if "ttgir" in cap.stages:
                t = cap.stage("ttgir").text
                if len(t) > best.get("ttgir", (0,))[0]:
                    best["ttgir"] = (len(t), f"{cap.kernel} [{cap.variant}] ttgir", t)
            for row in cap.pass_rows():
                if row.kind == "mlir" and row.stage == "llir" and row.size > best.get("llvm_dialect", (0,))[0]:
                    t = cap._pass_text(row.blob)
                    if "llvm.func" in t:
                        best["llvm_dialect"] = (len(t), f"{cap.kernel} [{cap.variant}] pass {row.name}", t)
    return {k: (v[1], v[2]) for k, v in best.items()}


def load_model_modules() -> None:
    """Import the parsers (loaded on first use) and the model's modules: imports are
    paid once per process, not per text, so they are loaded before any clock."""
    import irscope.ir.attributes  # noqa: F401
    import irscope.ir.layouts  # noqa: F401
    import irscope.ir.mlir  # noqa: F401
    import irscope.ir.mlir_loc  # noqa: F401
    import irscope.ir.types  # noqa: F401
    import irscope.ir.values  # noqa: F401


def build_model(mod) -> tuple[int, int, int]:
    """The model of ``mod``: def-use of every function, every op's types, every
    tensor/memdesc type's encoding and every alias decoded. (values, types, encodings)."""
    from irscope.ir.types import MemDescType, TensorType

    aliases = mod.encodings
    values = types = encodings = 0
    for fn in mod.functions:
        du = fn.def_use()
        values += len(du.values)
    for op in mod.ops():
        sig = op.signature(aliases)
        for t in (*sig.operands, *sig.results):
            types += 1
            if isinstance(t, (TensorType, MemDescType)) and t.encoding_ref:
                t.encoding(aliases)
                encodings += 1
    for ref in aliases:
        mod.encoding(ref)
        encodings += 1
    return values, types, encodings


def one_run(path: str, stage: str, settled: bool = True) -> dict:
    """Parse, then build the model; CPU seconds of each (in this fresh process).
    ``settled``: collections settled per phase (module docstring)."""
    load_model_modules()
    from irscope.ir import parse_stage
    from irscope.ir.model import read_unread_details
    import irscope.ir.types  # noqa: F401 - build_model's import, paid here

    text = Path(path).read_text()
    if settled:
        gc.collect()
    t0 = time.process_time()
    mod = parse_stage(stage, text)
    if settled:
        gc.collect(1)
    t1 = time.process_time()
    values, types, encodings = build_model(mod)
    if settled:
        gc.collect(1)
    t2 = time.process_time()
    # The detail read alone (what the def-use above did first), timed on a second parse
    # of the text: it memoises nothing, so the second read costs what the first did.
    again = parse_stage(stage, text)
    gc.collect()  # the parse pauses the collector: its deferred collections are not the read's
    t3 = time.process_time()
    read_unread_details(again.all_ops)
    t4 = time.process_time()
    return {"parse_s": t1 - t0, "model_s": t2 - t1, "details_s": t4 - t3, "ops": len(mod.all_ops), "values": values,
            "types": types, "encodings": encodings}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", default=str(ROOT / "out" / "samples.irscope"))
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--json")
    ap.add_argument("--one", nargs=3, metavar=("PATH", "STAGE", "GC"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        path, stage, how = args.one
        print(json.dumps(one_run(path, stage, how == "settled")))
        return 0
    import tempfile

    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (label, text) in pick_texts(args.bundle).items():
            path = Path(tmp) / f"{name}.txt"
            path.write_text(text)
            stage = "ttgir" if name == "ttgir" else "mlir"
            runs, as_is = [], []
            for _ in range(args.runs):  # the two ways alternate, so a slow spell hits both
                for how, out in (("settled", runs), ("as-is", as_is)):
                    out.append(json.loads(subprocess.run([sys.executable, __file__, "--one", str(path), stage, how],
                                                         check=True, capture_output=True, text=True).stdout))
            parse = statistics.median(r["parse_s"] for r in runs)
            model = statistics.median(r["model_s"] for r in runs)
            ratio = statistics.median(r["model_s"] / r["parse_s"] for r in runs)
            details = statistics.median(r["details_s"] for r in runs)
            beyond = statistics.median((r["model_s"] - r["details_s"]) / r["parse_s"] for r in runs)
            # Against the whole parse (the lazy one plus the details it defers: what an
            # eager parser, every field filled, would take), the model is what is left.
            beyond_full = statistics.median((r["model_s"] - r["details_s"]) / (r["parse_s"] + r["details_s"])
                                            for r in runs)
            case = {"case": name, "text": label, "bytes": len(text.encode()), "ops": runs[0]["ops"],
                    "values": runs[0]["values"], "types": runs[0]["types"], "encodings": runs[0]["encodings"],
                    "parse_ms_median": round(parse * 1000, 2), "model_ms_median": round(model * 1000, 2),
                    "ratio_model_over_parse": round(ratio, 3), "details_ms_median": round(details * 1000, 2),
                    "ratio_beyond_details_over_parse": round(beyond, 3),
                    "ratio_beyond_details_over_full_parse": round(beyond_full, 3),
                    "gc_as_is": {"parse_ms_median": round(statistics.median(r["parse_s"] for r in as_is) * 1000, 2),
                                 "model_ms_median": round(statistics.median(r["model_s"] for r in as_is) * 1000, 2),
                                 "ratio_model_over_parse": round(statistics.median(r["model_s"] / r["parse_s"]
                                                                                   for r in as_is), 3)}}
            cases.append(case)
            print(f"{name}: {label}: {case['ops']} ops, {case['values']} values, {case['types']} types, "
                  f"{case['encodings']} encodings; parse {case['parse_ms_median']} ms, def-use + decode "
                  f"{case['model_ms_median']} ms = {case['ratio_model_over_parse']}x the parse (of which "
                  f"{case['details_ms_median']} ms read the ops' lazy details; the rest is "
                  f"{case['ratio_beyond_details_over_parse']}x the parse; against the whole parse, lazy "
                  f"parse + details, the model is {case['ratio_beyond_details_over_full_parse']}x); "
                  f"collections not settled: {case['gc_as_is']['ratio_model_over_parse']}x")
    if args.json:
        doc = {"machine": {"cpus": __import__("os").cpu_count(), "python": platform.python_version(),
                           "platform": platform.platform()},
               "method": f"median of {args.runs} fresh subprocesses per way (collections settled per phase, "
                         f"and as-is, alternating); CPU time (time.process_time)",
               "cases": cases}
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
