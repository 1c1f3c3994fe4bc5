"""Compare irscope's IR-line -> Python-line mapping with tritonparse's, on THE SAME compile.

    python scripts/tritonparse_compare.py sample_kernels/{vector_add,jit_helper_call}.py \
        [--workdir DIR] [--json OUT.json]

How: ``irscope run`` runs this file in ``trace`` mode (``-- trace TRACE_DIR SAMPLE...``);
that mode calls ``tritonparse.structured_logging.init(TRACE_DIR)`` (which installs
``triton.knobs.compilation.listener``) and then runs each sample with ``runpy``. In
irscope's compile-only mode every launch compiles (no GPU), the listener fires, and so
one compile is seen by both tools. Compiles are paired by Triton's compile hash; the
stage texts are checked to be byte-identical.

tritonparse's side is its own per-compile parse,
``tritonparse.parse.trace_processor.parse_single_trace_content`` (what ``unified_parse``
runs on every compilation event); its ``source_mappings[stage][line]`` gives ``file``/
``line`` (the innermost frame) and, for inlined code, ``inlined_at_line`` (the root of
the chain); its Python view files a line under ``inlined_at_line`` when present, else
``line`` (``mapper.create_python_mapping``).

irscope's side: ``irscope.ir.parse_stage`` of the stored stage text; for each op (and
function header) with a location: the innermost frame and ``Location.user_frame()``.

Per stage, over the IR lines that hold an irscope op (or function header):
  * ``innermost``: both give the same innermost (file base name, line);
  * ``python``: irscope's user frame vs tritonparse's Python-view line, on the lines
    where both point into the user's file (the headline agreement rate);
  * every disagreement gets a class (``CLASSES``).
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAGES = ("ttir", "ttgir", "llir", "ptx")

# Disagreement classes (documented in docs/tritonparse-comparison.md).
CLASSES = {
    "helper-callsite": "op inlined from a user @triton.jit helper: irscope's user frame is the "
                       "helper's own line (innermost non-library frame), tritonparse files it "
                       "under the outermost call site in the kernel (inlined_at root)",
    "library-in-helper": "library code (tl.sum, tl.sigmoid...) called inside a user helper: irscope "
                         "gives the helper's call line, tritonparse the kernel's call of the helper",
    "library-only": "every frame is Triton library code: irscope has no user frame, tritonparse "
                    "maps to a library line",
    "tp-library-line": "PTX: tritonparse has no inlined_at root for PTX, so inlined library code "
                       "(tl.sum, tl.cdiv, tl.max) is filed under triton/language/standard.py; irscope "
                       "walks the .loc inlined_at chain to the user's call line",
    "tp-region-header": "an op with regions (tt.func, scf.for, tt.reduce) prints its loc after its "
                        "closing brace: tritonparse maps only that closing line, irscope maps the op's "
                        "first line",
    "tp-unknown-callee": "loc(callsite(unknown at <user line>)) (e.g. a constant folded from tl.cdiv): "
                         "tritonparse drops the location, irscope keeps the call site",
    "tp-line0-carryover": "PTX `.loc N 0 0` (line 0: no source): tritonparse keeps the previous .loc's "
                          "line, irscope reports no location",
    "tp-missing": "irscope op has a location, tritonparse has no mapping for the line (unexplained)",
    "irscope-missing": "tritonparse maps the line, irscope's op there has no location (unexplained)",
    "other": "anything else (would be a bug in one of the tools)",
}


def _base(path: str | None) -> str:
    return os.path.basename(path or "")


# ---------------------------------------------------------------- trace (inside irscope run)

def trace_main(trace_dir: str, samples: list[str]) -> None:
    """Init tritonparse's structured logging, then run each sample as ``__main__``.

    Compile-only mode computes no tensor values: a sample's numeric check after its
    launches fails; that is expected, so the next sample still runs."""
    import tritonparse.structured_logging as sl

    sl.init(trace_dir)
    for sample in samples:
        try:
            runpy.run_path(sample, run_name="__main__")
        except Exception as exc:  # noqa: BLE001 - the checks after the launches
            print(f"[tritonparse_compare] {sample}: {type(exc).__name__} after launches", file=sys.stderr)


def capture(samples: list[str], workdir: str, *, llvm_passes: bool = False,
            bundle_name: str = "cmp.irscope") -> tuple[str, str]:
    """Run the samples once under ``irscope run`` with tritonparse tracing on.

    Returns (bundle path, tritonparse trace folder)."""
    bundle = os.path.join(workdir, bundle_name)
    trace_dir = os.path.join(workdir, "tp_trace_" + Path(bundle_name).stem)
    os.makedirs(trace_dir, exist_ok=True)
    cmd = [sys.executable, "-m", "irscope", "run", str(Path(__file__).resolve()), "-o", bundle, "-q", "--no-open"]
    if llvm_passes:
        cmd.append("--llvm-passes")
    cmd += ["--", "trace", trace_dir, *[str(Path(s).resolve()) for s in samples]]
    proc = subprocess.run(cmd, cwd=str(ROOT), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0 or not os.path.exists(bundle):
        raise RuntimeError(f"irscope run failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return bundle, trace_dir


def load_trace_events(trace_dir: str) -> list[str]:
    """The raw NDJSON lines of every compilation event in a tritonparse trace folder."""
    out = []
    for path in sorted(Path(trace_dir).glob("*.ndjson")):
        for line in path.read_text().splitlines():
            if '"event_type":"compilation"' in line[:200] or '"event_type": "compilation"' in line[:200]:
                out.append(line)
    return out


def tritonparse_parse(event_line: str) -> dict:
    """tritonparse's per-compile parse of one compilation event (the payload, parsed)."""
    from tritonparse.parse.trace_processor import parse_single_trace_content

    return json.loads(parse_single_trace_content(event_line))["payload"]


# ---------------------------------------------------------------- irscope per-line mapping

@dataclass
class LineMap:
    """irscope's mapping of one IR line."""

    inner: tuple[str, int] | None   # innermost frame (base name, line)
    user: tuple[str, int] | None    # Location.user_frame() (base name, line)
    outer: tuple[str, int] | None   # outermost frame
    depth: int
    has_library: bool
    kind: str = ""          # Location.kind
    regions: bool = False   # a function header or an op with regions
    line0: bool = False     # a PTX/LLVM location at line 0


def irscope_lines(module) -> dict[int, LineMap]:
    """IR line -> :class:`LineMap` for every op and function header of ``module``."""
    out: dict[int, LineMap] = {}

    def put(line: int, loc, regions: bool, loc_ref: str) -> None:
        frames = loc.frames
        if not frames:
            ref = loc_ref.split()
            out.setdefault(line, LineMap(None, None, None, 0, False, loc.kind, regions,
                                         len(ref) >= 2 and ref[1] == "0"))
            return
        uf = loc.user_frame()
        out[line] = LineMap((_base(frames[0].file), frames[0].line),
                            (_base(uf.file), uf.line) if uf else None,
                            (_base(frames[-1].file), frames[-1].line), len(frames),
                            any(f.is_library() for f in frames), loc.kind, regions)

    for fn in module.functions:
        put(fn.line, fn.location, True, fn.loc_ref)
    for op in module.ops():
        if op.line in out and out[op.line].inner is not None:
            continue
        put(op.line, op.location, bool(op.regions), op.loc_ref)
    return out


# ---------------------------------------------------------------- comparison

@dataclass
class StageResult:
    kernel: str
    variant: str
    stage: str
    compared: int = 0          # irscope op lines (with or without a location)
    both_mapped: int = 0       # both tools map the line
    inner_agree: int = 0       # same innermost (file, line)
    user_both: int = 0         # both give a line in the user's file
    user_agree: int = 0        # ... and the same one
    conv_agree: int = 0        # irscope's frames read with tritonparse's rule give its Python line
    classes: Counter = field(default_factory=Counter)
    examples: dict = field(default_factory=dict)

    @property
    def inner_rate(self) -> float:
        return self.inner_agree / self.both_mapped if self.both_mapped else 1.0

    @property
    def conv_rate(self) -> float:
        return self.conv_agree / self.both_mapped if self.both_mapped else 1.0

    @property
    def user_rate(self) -> float:
        return self.user_agree / self.user_both if self.user_both else 1.0

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "variant": self.variant, "stage": self.stage,
                "compared": self.compared, "both_mapped": self.both_mapped,
                "inner_agree": self.inner_agree, "inner_rate": round(self.inner_rate, 4),
                "user_both": self.user_both, "user_agree": self.user_agree,
                "user_rate": round(self.user_rate, 4), "conv_agree": self.conv_agree,
                "conv_rate": round(self.conv_rate, 4), "classes": dict(self.classes),
                "examples": self.examples}


def classify(mine: LineMap, tp: dict, user_file: str) -> str | None:
    """None when the two agree on the Python line; else the disagreement class."""
    tp_inner = (_base(tp.get("file")), tp.get("line"))
    tp_py = (_base(tp.get("inlined_at_file") or tp.get("file")),
             tp["inlined_at_line"] if tp.get("inlined_at_line") is not None else tp.get("line"))
    if mine.inner is None:
        return "irscope-missing"
    if mine.user is None:
        return None if tp_py == mine.inner or tp_py[0] != user_file else "library-only"
    if mine.user == tp_py:
        return None
    if mine.depth > 1 and tp.get("is_callsite"):
        if mine.outer == tp_py and mine.inner == tp_inner:
            return "library-in-helper" if mine.has_library else "helper-callsite"
    if (tp.get("inlined_at_line") is None and tp_py[0] != user_file and mine.inner == tp_inner
            and mine.has_library and mine.user[0] == user_file):
        return "tp-library-line"
    return "other"


def classify_missing(mine: LineMap, stage: str) -> str:
    """The class of a line only irscope maps (``tp`` side missing)."""
    if mine.regions:
        return "tp-region-header"
    if mine.kind == "callsite" and mine.depth == 1:
        return "tp-unknown-callee"
    return "tp-missing"


def compare_capture(module_by_stage: dict, tp_payload: dict, kernel: str, variant: str,
                    user_file: str) -> list[StageResult]:
    results = []
    maps = tp_payload.get("source_mappings", {})
    for stage in STAGES:
        if stage not in module_by_stage:
            continue
        mine = irscope_lines(module_by_stage[stage])
        tp = maps.get(stage, {})
        r = StageResult(kernel, variant, stage)
        for line, lm in sorted(mine.items()):
            r.compared += 1
            t = tp.get(str(line))
            if t is not None and t.get("kind") == "loc_def":
                t = None
            if t is None:
                if lm.inner is not None:
                    cls = classify_missing(lm, stage)
                    r.classes[cls] += 1
                    r.examples.setdefault(cls, {"line": line, "irscope": lm.user or lm.inner})
                continue
            if lm.inner is None:
                cls = "tp-line0-carryover" if lm.line0 else "irscope-missing"
                r.classes[cls] += 1
                r.examples.setdefault(cls, {"line": line, "tritonparse": [_base(t.get("file")), t.get("line")]})
                continue
            r.both_mapped += 1
            if (lm.inner[0], lm.inner[1]) == (_base(t.get("file")), t.get("line")):
                r.inner_agree += 1
            tp_py_file = _base(t.get("inlined_at_file") or t.get("file"))
            tp_py = t["inlined_at_line"] if t.get("inlined_at_line") is not None else t.get("line")
            # tritonparse's rule: the outermost frame when it found an inlined_at root,
            # else the innermost one.
            mine_conv = lm.outer if t.get("inlined_at_line") is not None else lm.inner
            if mine_conv == (tp_py_file, tp_py):
                r.conv_agree += 1
            if lm.user is not None and lm.user[0] == user_file and tp_py_file == user_file:
                r.user_both += 1
                if lm.user[1] == tp_py:
                    r.user_agree += 1
            cls = classify(lm, t, user_file)
            if cls is not None:
                r.classes[cls] += 1
                r.examples.setdefault(cls, {
                    "line": line, "irscope_inner": list(lm.inner), "irscope_user": list(lm.user) if lm.user else None,
                    "tritonparse": [_base(t.get("file")), t.get("line")],
                    "tritonparse_python": [tp_py_file, tp_py]})
        results.append(r)
    return results


def compare(bundle_path: str, trace_dir: str) -> tuple[list[StageResult], dict]:
    """Compare every capture of the bundle with the tritonparse compile of the same hash."""
    from irscope.ir import parse_stage
    from irscope.store.bundle import Bundle

    payloads = {}
    for ev in load_trace_events(trace_dir):
        p = tritonparse_parse(ev)
        payloads[p.get("metadata", {}).get("hash")] = p
    results: list[StageResult] = []
    meta = {"captures": 0, "paired": 0, "identical_texts": 0, "stage_texts": 0}
    with Bundle.open(bundle_path) as b:
        for row in b.captures():
            meta["captures"] += 1
            h = b.conn.execute("SELECT hash FROM captures WHERE id=?", (row.id,)).fetchone()[0]
            p = payloads.get(h)
            if p is None:
                continue
            meta["paired"] += 1
            mods = {}
            for stage in STAGES:
                if stage not in row.stages:
                    continue
                text = b.stage_text(row.id, stage)
                tp_text = next((v for k, v in p.get("file_content", {}).items() if k.endswith("." + stage)), None)
                meta["stage_texts"] += 1
                meta["identical_texts"] += int(tp_text == text)
                mods[stage] = parse_stage(stage, text)
            results += compare_capture(mods, p, row.kernel, row.variant, _base(row.file))
    return results, meta


def summarise(results: list[StageResult]) -> dict:
    """Per (kernel, stage): sums over the kernel's variants."""
    agg: dict[tuple[str, str], StageResult] = {}
    for r in results:
        a = agg.setdefault((r.kernel, r.stage), StageResult(r.kernel, "*", r.stage))
        a.compared += r.compared
        a.both_mapped += r.both_mapped
        a.inner_agree += r.inner_agree
        a.user_both += r.user_both
        a.user_agree += r.user_agree
        a.conv_agree += r.conv_agree
        a.classes.update(r.classes)
        for k, v in r.examples.items():
            a.examples.setdefault(k, v)
    return {f"{k}/{s}": v.to_json() for (k, s), v in agg.items()}


def print_table(summary: dict) -> None:
    print(f"{'kernel/stage':38} {'ops':>5} {'both':>5} {'inner%':>7} {'rule%':>7} {'user-both':>9} {'python%':>8}  disagreements")
    for key, r in summary.items():
        cls = ", ".join(f"{k}={v}" for k, v in sorted(r["classes"].items()))
        print(f"{key:38} {r['compared']:5d} {r['both_mapped']:5d} {100 * r['inner_rate']:6.1f}% {100 * r['conv_rate']:6.1f}% "
              f"{r['user_both']:9d} {100 * r['user_rate']:7.1f}%  {cls}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "trace":
        trace_main(argv[1], argv[2:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("samples", nargs="*")
    ap.add_argument("--workdir")
    ap.add_argument("--json")
    ap.add_argument("--reuse", nargs=2, metavar=("BUNDLE", "TRACE_DIR"),
                    help="compare an earlier capture instead of capturing the samples")
    args = ap.parse_args(argv)
    if args.reuse:
        bundle, trace_dir = args.reuse
    else:
        workdir = args.workdir or tempfile.mkdtemp(prefix="irscope-tp-")
        os.makedirs(workdir, exist_ok=True)
        bundle, trace_dir = capture(args.samples, workdir)
    results, meta = compare(bundle, trace_dir)
    summary = summarise(results)
    print(f"captures {meta['captures']}, paired with tritonparse {meta['paired']}, "
          f"identical stage texts {meta['identical_texts']}/{meta['stage_texts']}")
    print_table(summary)
    if args.json:
        Path(args.json).write_text(json.dumps({"meta": meta, "summary": summary,
                                               "per_capture": [r.to_json() for r in results]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
