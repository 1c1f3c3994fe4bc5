"""The what-if acceptance checks on the held-out kernels ``tests/kernels/heldout_b_*.py``
(run by hand, not in CI: about 15 minutes on 2 cores).

Each kernel's script compiles it at two settings (two ``num_stages``, or two configs);
it is captured compile-only for sm_90 and sm_80 (``irscope run --target sm_90 --target
sm_80``), then, for every pair of captures that differ only in ``num_stages``:

- ``replay --from ttir --set num_stages=N`` must equal the script's compile with N
  (TTGIR, LLVM IR and PTX up to locations; registers, spills, shared memory);
- ``replay --without-pass tritongpu-pipeline`` of the deepest one must leave no
  ``ttg.async_copy_global_to_local`` in the TTGIR;
- ``replay --from ttgir`` must give the same LLVM IR and PTX;
- an sm_90 capture replayed with ``--target sm_80`` must equal the sm_80 capture;
- ``tune`` of the captured ``num_stages`` values (``--jobs 2``, both targets) must give
  the script's compiles: IR, registers, spills, shared memory, SASS by class, MMA kind.

Prints one line per check (``OK`` or ``DIFF``/``FAIL`` with the first difference) and
exits non-zero when any check fails::

    .venv/bin/python scripts/heldout_whatif_check.py [--work DIR] [KERNEL_STEM ...]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IRSCOPE = str(ROOT / ".venv" / "bin" / "irscope")
ASYNC_COPY = "ttg.async_copy_global_to_local"


def _group_key(cap) -> tuple:
    """Captures that differ only in num_stages share this key."""
    opts = {k: cap.options.get(k) for k in ("num_warps", "num_ctas", "maxnreg")}
    consts = {k: v for k, v in cap.constexprs.items() if k != "num_stages"}
    return cap.kernel, cap.target, json.dumps(consts, sort_keys=True, default=str), json.dumps(opts, sort_keys=True)


def check_replays(bundle: str, out: str) -> list[str]:
    """The replay checks of one captured bundle: one line each."""
    import irscope
    from irscope.whatif.equivalence import compile_differences
    from irscope.whatif.replay import ReplayRequest, replay_many

    with irscope.open(bundle) as b:
        caps = [c for c in b.captures() if not c.failed]
        by_variant = {(c.target, c.kernel, c.variant): c for c in caps}
        groups: dict[tuple, list] = {}
        for c in caps:
            groups.setdefault(_group_key(c), []).append(c)
        jobs: list[tuple[str, object, object]] = []
        reqs = []
        for g in groups.values():
            for a, real in itertools.permutations(g, 2):
                if a.options["num_stages"] != real.options["num_stages"]:
                    reqs.append(ReplayRequest(bundle, a.id, "ttir", (("num_stages", str(real.options["num_stages"])),)))
                    jobs.append(("set num_stages", a, real))
            deepest = max(g, key=lambda c: c.options["num_stages"])
            reqs.append(ReplayRequest(bundle, deepest.id, "ttir", without=("tritongpu-pipeline",)))
            jobs.append(("without pipeliner", deepest, None))
        for c in caps:
            reqs.append(ReplayRequest(bundle, c.id, "ttgir"))
            jobs.append(("from ttgir", c, c))
            other = by_variant.get(("sm_80", c.kernel, c.variant))
            if c.target == "sm_90" and other is not None:
                reqs.append(ReplayRequest(bundle, c.id, "ttir", target="sm_80"))
                jobs.append(("target sm_80", c, other))
        outcomes = replay_many(reqs, out, jobs=2)
        lines = []
        with irscope.open(out) as r:
            for (what, a, real), o in zip(jobs, outcomes):
                tag = f"{what}: #{a.id} {a.kernel} {a.target} [{a.variant}] -> {o.request.label()}"
                if not o.ok:
                    lines.append(f"FAIL {tag}: {o.error}")
                    continue
                got = r.capture(f"#{o.capture_id}")
                if real is None:
                    n = got.stage("ttgir").text.count(ASYNC_COPY)
                    lines.append(f"{'OK  ' if n == 0 else 'DIFF'} {tag}: {n} async copies left")
                    continue
                stages = ("llir", "ptx") if what == "from ttgir" else ("ttgir", "llir", "ptx")
                diffs = compile_differences(real, got, stages=stages)
                lines.append(f"{'OK  ' if not diffs else 'DIFF'} {tag}" + (f": {diffs[0]}" if diffs else ""))
    return lines


def check_tune(bundle: str, out: str) -> list[str]:
    """Tune every kernel of ``bundle`` over its captured num_stages on its targets, and
    compare each row with the capture of the same variant: one line per row."""
    import irscope
    from irscope.core.tune_table import mma_kind, tune_row
    from irscope.whatif.equivalence import compile_differences

    lines = []
    with irscope.open(bundle) as b:
        caps = [c for c in b.captures() if not c.failed]
        for kernel in dict.fromkeys(c.kernel for c in caps):
            mine = [c for c in caps if c.kernel == kernel]
            stages = sorted({c.options["num_stages"] for c in mine})
            targets = sorted({c.target for c in mine})
            base = mine[0]
            target_args = [a for t in targets for a in ("--target", t)]
            p = subprocess.run([IRSCOPE, "tune", bundle, f"#{base.id}", "--grid",
                                f"num_stages={','.join(map(str, stages))}", "--jobs", "2", "-o", out, "--json",
                                *target_args], capture_output=True, text=True, cwd=ROOT)
            if p.returncode:
                lines.append(f"FAIL tune {kernel}: {p.stderr.strip()[-300:]}")
                continue
            table = json.loads(p.stdout)
            with irscope.open(out) as t:
                for row in table["rows"]:
                    tag = f"tune {kernel} {row['target']} {row['config']}"
                    if not row["compiled"]:
                        lines.append(f"FAIL {tag}: {row['error']}")
                        continue
                    tuned = t.capture(f"#{row['capture_id']}")
                    real = next((c for c in mine if c.target == tuned.target and c.variant == tuned.variant), None)
                    if real is None:
                        continue  # the script made no compile of this configuration
                    diffs = [str(d) for d in compile_differences(real, tuned)]
                    if tune_row(row["config"], row["target"], real).figures != tune_row(row["config"], row["target"],
                                                                                       tuned).figures:
                        diffs.append("figures differ")
                    if mma_kind(real) != row["mma_kind"]:
                        diffs.append(f"mma kind {mma_kind(real)} vs {row['mma_kind']}")
                    lines.append(f"{'OK  ' if not diffs else 'DIFF'} {tag}" + (f": {diffs[0]}" if diffs else ""))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernels", nargs="*", help="stems after heldout_b_ (default: all)")
    ap.add_argument("--work", help="folder for the bundles (default: a temporary one)")
    args = ap.parse_args(argv)
    files = sorted((ROOT / "tests" / "kernels").glob("heldout_b_*.py"))
    if args.kernels:
        files = [f for f in files if f.stem[len("heldout_b_"):] in args.kernels]
    work = args.work or tempfile.mkdtemp(prefix="irscope-heldout-")
    os.makedirs(work, exist_ok=True)
    bad = 0
    for f in files:
        name = f.stem[len("heldout_b_"):]
        bundle = os.path.join(work, f"{name}.irscope")
        for path in (bundle, bundle + ".replays", bundle + ".tune"):
            if os.path.exists(path):
                os.remove(path)
        p = subprocess.run([IRSCOPE, "run", str(f), "--target", "sm_90", "--target", "sm_80", "-o", bundle, "-q",
                            "--no-open"], capture_output=True, text=True, cwd=ROOT)
        print(f"== {name}" + (f" (capture: {p.stderr.strip().splitlines()[-1]})" if p.returncode else ""), flush=True)
        for line in check_replays(bundle, bundle + ".replays") + check_tune(bundle, bundle + ".tune"):
            bad += not line.startswith("OK")
            print(line, flush=True)
    print(f"{bad} check(s) failed; bundles in {work}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
