"""Noise removed by the structural diff: irscope's change count next to ``diff -u``.

For each pair of captures of the same kernel and variant (paired by
``irscope.diff.pairing.pair_captures``, restricted to one target), and for each stage
ttir, ttgir, llir, ptx, sass, this counts

- irscope: ``added + removed + moved + changed`` of that stage in
  ``irscope diff A:#ID B:#ID --json``;
- diff -u: lines starting with ``+`` or ``-`` (not the ``+++`` / ``---`` headers) in
  ``diff -u`` of the two ``irscope cat BUNDLE '#ID' --stage S`` texts.

Two comparisons:
1. versions: Triton 3.4 against 3.5 (SSA value naming changed at 3.5), the bundles of
   ``scripts/coverage.py`` (``out/coverage/triton-3.4.irscope``, ``-3.5``);
2. recompiled: one Triton's capture against the same scripts captured again with the
   same Triton into a second bundle (``--recompile-python``; made if missing).

    .venv/bin/python benchmarks/bench_diff_noise.py            # table on stdout, JSON to docs/data/
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IRSCOPE = str(ROOT / ".venv" / "bin" / "irscope")
STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False, **kw)


def recompile(python: str, target: str, bundle: Path, timeout: float) -> list[dict]:
    """Capture every sample again into ``bundle`` (one irscope run per script)."""
    bundle.parent.mkdir(parents=True, exist_ok=True)
    runs = []
    for s in sorted((ROOT / "sample_kernels").glob("*.py")):
        r = sh([IRSCOPE, "run", str(s.relative_to(ROOT)), "--no-open", "--python", python, "--target", target,
                "-o", str(bundle), "-q"], timeout=timeout)
        runs.append({"script": s.name, "rc": r.returncode})
        print(f"recompiled {s.name}: exit {r.returncode}", file=sys.stderr, flush=True)
    return runs


def cli(argv: list[str]) -> tuple[int, str]:
    """``irscope ARGV``: the command-line entry point called in-process (the same code
    as the command, without an interpreter start per call), its stdout captured."""
    import contextlib
    import io

    from irscope.cli.main import main as irscope_main
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            rc = irscope_main(argv)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 1
    return rc or 0, buf.getvalue()


def cat(bundle: str, cid: int, stage: str, dest: Path) -> bool:
    rc, _ = cli(["cat", bundle, f"#{cid}", "--stage", stage, "-o", str(dest)])
    return rc == 0


def diff_u_lines(a: Path, b: Path) -> int:
    out = subprocess.run(["diff", "-u", str(a), str(b)], capture_output=True, text=True, check=False).stdout
    return sum(1 for line in out.splitlines()
               if line.startswith(("+", "-")) and not line.startswith(("+++", "---")))


def one_pair(label: str, a_path: str, ca, b_path: str, cb, tmp: Path) -> dict:
    rc, out = cli(["diff", f"{a_path}:#{ca.id}", f"{b_path}:#{cb.id}", "--json"])
    try:
        dj = json.loads(out)
    except json.JSONDecodeError:
        dj = {"stages": {}}
    row = {"comparison": label, "script": Path(ca.row.file or "?").name, "kernel": ca.kernel,
           "variant_a": ca.variant, "variant_b": cb.variant, "a": f"{Path(a_path).name}:#{ca.id}",
           "b": f"{Path(b_path).name}:#{cb.id}", "diff_rc": rc, "stages": {}}
    for s in STAGES:
        if s not in ca.stages or s not in cb.stages:
            continue
        st = dj.get("stages", {}).get(s)
        fa, fb = tmp / f"{label}-{ca.id}-{cb.id}-a.{s}", tmp / f"{label}-{ca.id}-{cb.id}-b.{s}"
        if not (cat(a_path, ca.id, s, fa) and cat(b_path, cb.id, s, fb)):
            continue
        lines_a = sum(1 for _ in fa.open(errors="replace"))
        row["stages"][s] = {
            "irscope": None if st is None else sum(st.get(k, 0) for k in ("added", "removed", "moved", "changed")),
            "matched": None if st is None else st.get("matched"),
            "diff_u": diff_u_lines(fa, fb), "lines_a": lines_a}
    return row


def compare(label: str, a_path: str, b_path: str, target: str, tmp: Path) -> list[dict]:
    import irscope
    from irscope.diff.pairing import pair_captures
    ba, bb = irscope.open(a_path), irscope.open(b_path)
    ca = [c for c in ba.captures() if c.target == target and not c.failed]
    cb = [c for c in bb.captures() if c.target == target and not c.failed]
    pairing = pair_captures(ca, cb)
    pairs = [p for p in pairing.pairs if not getattr(p, "differs", ())]  # same kernel, same variant
    rows = [one_pair(label, a_path, p.a, b_path, p.b, tmp) for p in pairs]  # serial: stdout is redirected
    for c in pairing.only_a:
        print(f"{label}: unpaired in A: {c.title()}", file=sys.stderr)
    for c in pairing.only_b:
        print(f"{label}: unpaired in B: {c.title()}", file=sys.stderr)
    return rows


def table(rows: list[dict]) -> str:
    out = ["| comparison | kernel (variant) | " + " | ".join(f"{s} irscope / diff -u" for s in STAGES) + " |",
           "| --- | --- | " + " | ".join("---:" for _ in STAGES) + " |"]
    totals: dict = {}
    for r in rows:
        cells = []
        for s in STAGES:
            x = r["stages"].get(s)
            if x is None:
                cells.append("n/a")
                continue
            cells.append(f"{x['irscope']} / {x['diff_u']}")
            t = totals.setdefault((r["comparison"], s), [0, 0])
            t[0] += x["irscope"] or 0
            t[1] += x["diff_u"]
        # The stride_*=1 fields (divisibility specialisation) are alike on every variant: left out.
        var = ",".join(f for f in r["variant_b"].split(",") if not f.startswith("stride_"))
        out.append(f"| {r['comparison']} | {r['kernel']} ({var}) | " + " | ".join(cells) + " |")
    for comp in dict.fromkeys(r["comparison"] for r in rows):
        out.append(f"| **{comp}: total** | | " + " | ".join(
            f"**{totals[(comp, s)][0]} / {totals[(comp, s)][1]}**" if (comp, s) in totals else "n/a"
            for s in STAGES) + " |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", default="out/coverage/triton-3.4.irscope", help="older version's bundle")
    ap.add_argument("--b", default="out/coverage/triton-3.5.irscope", help="newer version's bundle")
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--self-a", default=None, help="a bundle to diff against its recompilation (default: --b)")
    ap.add_argument("--self-b", default="out/bench_noise/recompiled-3.5.irscope",
                    help="the recompilation (captured with --recompile-python if missing)")
    ap.add_argument("--recompile-python", default=".venvs/triton-3.5/bin/python")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--json", default="docs/data/bench_diff_noise.json")
    a = ap.parse_args()
    self_a = a.self_a or a.b
    recompiled = None
    if not (ROOT / a.self_b).exists():
        recompiled = recompile(a.recompile_python, a.target, ROOT / a.self_b, a.timeout)
    with tempfile.TemporaryDirectory(prefix="bench-diff-noise-") as td:
        tmp = Path(td)
        rows = compare("3.4 vs 3.5", a.a, a.b, a.target, tmp)
        rows += compare("recompiled", self_a, a.self_b, a.target, tmp)
    import irscope
    versions = {}
    for p in (a.a, a.b, a.self_b):
        with irscope.open(p) as b:
            versions[p] = sorted({c.triton_version for c in b.captures()})
    print(table(rows))
    data = {"method": {"command": "python benchmarks/bench_diff_noise.py " + " ".join(sys.argv[1:]),
                       "date": _dt.date.today().isoformat(), "target": a.target,
                       "machine": f"{os.cpu_count()} cores, no GPU, {platform.system()} {platform.machine()}, "
                                  f"Python {platform.python_version()}",
                       "bundles": {"versions_a": a.a, "versions_b": a.b, "recompiled_a": self_a,
                                   "recompiled_b": a.self_b},
                       "triton_versions": versions,
                       "how": "irscope diff / irscope cat run through irscope.cli.main.main in-process (the commands' own code)",
                       "irscope_count": "added+removed+moved+changed of the stage in `irscope diff A:#ID B:#ID --json`",
                       "diff_u_count": "lines starting with + or - (not +++/---) in `diff -u` of the two "
                                       "`irscope cat BUNDLE '#ID' --stage S` texts",
                       "pairs": "irscope.diff.pairing.pair_captures, exact pairs only (same kernel, same variant)",
                       "recompile_runs": recompiled},
            "figures": rows, "table_markdown": table(rows)}
    Path(ROOT / a.json).parent.mkdir(parents=True, exist_ok=True)
    Path(ROOT / a.json).write_text(json.dumps(data, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
