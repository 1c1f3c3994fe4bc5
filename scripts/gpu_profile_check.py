"""Check on a GPU that ``irscope run --profile`` and ``irscope profile import`` agree.

    python3 scripts/gpu_profile_check.py [--samples a,b,c] [--launches N] [--work DIR] [--json FILE]

Needs an NVIDIA GPU, ``ncu`` on PATH and a python3 with torch and Triton (irscope from
this checkout: PYTHONPATH=.). For each sample script (sample_kernels/<name>.py):

1. ``irscope run --profile --profiler ncu --keep-profile DIR`` captures it and attaches
   Nsight Compute's samples of its first N launches; the report is kept;
2. the same report is imported into the same bundle twice more with ``irscope profile
   import``: as its source-page CSV export (``ncu -i R --page source --csv
   --print-source sass``) and as the ``.ncu-rep`` itself;
3. ``irscope hot --json`` of the three profiles (same launches) must give the same
   figures: total, unattributed, every line's samples and stalls, every SASS op's samples;
4. against Nsight Compute's own per-line view of that export (each instruction on its
   innermost ``//## File`` line, as ncu shows source): every user line has at least ncu's
   samples, and every sample ncu puts on triton/language/*.py is on a user line;
5. ``irscope run --profile --profiler proton`` of the same script (its own run):
   conservation (lines + unattributed == total) and the user lines it finds.

Prints a table per step and writes every figure to --json. Each step has a timeout;
a failed step is reported and the next goes on. Exit status 0 when every check held.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def sh(cmd: list[str], timeout: int, log: list[str], stdout_file: Path | None = None) -> tuple[int, str, float]:
    """Run ``cmd``; (exit status, stdout, seconds). A timeout is status 124."""
    t0 = time.monotonic()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYTHONUNBUFFERED="1")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = 124, (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else (exc.stdout or ""), "timeout"
    secs = time.monotonic() - t0
    if stdout_file is not None:
        stdout_file.write_text(out)
    log.append(f"$ {' '.join(cmd)}\n[rc={rc} {secs:.1f}s]\n{err[-3000:]}")
    print(f"  rc={rc} {secs:5.1f}s  {' '.join(cmd[:8])}{' ...' if len(cmd) > 8 else ''}", flush=True)
    if rc != 0:
        print("    " + "\n    ".join((err or out).strip().splitlines()[-5:]), flush=True)
    return rc, out, secs


def irscope_cmd(*args: object) -> list[str]:
    return [PY, "-m", "irscope", *map(str, args)]


def hot(bundle: Path, capture: int, profile: int, log: list[str]) -> dict[str, Any] | None:
    rc, out, _ = sh(irscope_cmd("hot", bundle, f"#{capture}", "--profile", profile, "--json"), 120, log)
    return json.loads(out) if rc == 0 else None


def figures(h: dict[str, Any]) -> dict[str, Any]:
    """What must agree between two profiles of the same launches."""
    return {"total_samples": h["total_samples"], "unattributed": h["unattributed"],
            "lines": sorted((Path(x["file"]).name, x["line"], x["samples"], sorted(x["stalls"].items()))
                            for x in h["lines"]),
            "ops": sorted((o["stage_line"], o["samples"]) for o in h["ops"])}


def ncu_own_view(bundle: Path, capture: int, sass_csv: Path) -> tuple[dict[tuple[str, int], int], int, int]:
    """Nsight Compute's per-line view of the blocks of this capture: (user file base
    name, line) -> samples; samples on triton/language/*; samples with no line."""
    sys.path.insert(0, str(ROOT))
    import irscope
    from irscope.compiler.stages import SASS
    from irscope.core.profile import sass_sites
    from irscope.profiles.ncu_source import parse_ncu_source
    from irscope.profiles.sass_match import capture_sass, sass_mismatch

    with irscope.open(str(bundle)) as b:
        cap = next(c for c in b.captures() if c.id == capture)
        sites = {s.offset: s for s in sass_sites(cap)}
        sass = capture_sass(cap.stage(SASS).text, cap.kernel)
        blocks = [bl for bl in parse_ncu_source(sass_csv.read_text()) if bl.kernel == cap.kernel
                  and sass_mismatch(cap.kernel, bl.instructions, sass, bl.base_address) is None]
    user: dict[tuple[str, int], int] = {}
    library = nowhere = 0
    for bl in blocks:
        for ins in bl.instructions:
            site = sites.get(ins.offset)
            frame = site.frame if site is not None else None
            if frame is None or not frame.line:
                nowhere += ins.samples
            elif "triton/language/" in frame.file.replace(os.sep, "/"):
                library += ins.samples
            else:
                key = (Path(frame.file).name, frame.line)
                user[key] = user.get(key, 0) + ins.samples
    return user, library, nowhere


def check_sample(name: str, work: Path, launches: int, timeout: int) -> dict[str, Any]:
    d = work / name
    d.mkdir(parents=True, exist_ok=True)
    log: list[str] = []
    res: dict[str, Any] = {"sample": name, "checks": {}, "seconds": {}}
    script = f"sample_kernels/{name}.py"  # relative, as a user in the checkout types it
    bundle = d / "run.irscope"
    print(f"== {name}", flush=True)
    rc, _, s = sh(irscope_cmd("run", script, "--profile", "--profiler", "ncu", "--profile-launches", launches,
                              "--keep-profile", d, "-o", bundle, "--no-open", "-q"), timeout, log)
    res["seconds"]["run --profile (ncu)"] = round(s, 1)
    res["checks"]["run --profile ncu exit 0"] = rc == 0
    report = d / "profile.ncu-rep"
    if rc != 0 or not report.exists():
        (d / "log.txt").write_text("\n".join(log))
        return res
    rc, _, s = sh(["ncu", "-i", str(report), "--page", "source", "--csv", "--print-source", "sass"], timeout, log,
                  stdout_file=d / "sass.csv")
    res["seconds"]["ncu -i export"] = round(s, 1)
    rc, out, _ = sh(irscope_cmd("profile", "ls", bundle, "--json"), 120, log)
    run_profiles = json.loads(out) if rc == 0 else []
    res["run_profiles"] = run_profiles
    per_capture: list[dict[str, Any]] = []
    for p in run_profiles:
        cid, pid = int(p["capture_id"]), int(p["id"])
        entry: dict[str, Any] = {"capture": cid, "kernel": p.get("kernel"), "variant": p.get("variant"),
                                 "launches": p.get("launches")}
        ids = {"run --profile": pid}
        for label, file in (("import csv", d / "sass.csv"), ("import ncu-rep", report)):
            rc, out, s = sh(irscope_cmd("profile", "import", bundle, f"#{cid}", file), timeout, log)
            res["seconds"][f"{label} #{cid}"] = round(s, 1)
            entry[f"{label} exit 0"] = rc == 0
            if rc == 0:
                rc2, out2, _ = sh(irscope_cmd("profile", "ls", bundle, "--json"), 120, log)
                mine = [int(q["id"]) for q in json.loads(out2) if int(q["capture_id"]) == cid] if rc2 == 0 else []
                ids[label] = max(mine)
        hots = {label: hot(bundle, cid, i, log) for label, i in ids.items()}
        base = hots["run --profile"]
        if base is None:
            entry["hot ok"] = False
            per_capture.append(entry)
            continue
        fig = figures(base)
        entry.update(total_samples=base["total_samples"], unattributed=base["unattributed"],
                     lines=[(x["file"], x["line"], x["samples"], x.get("how")) for x in base["lines"]],
                     top_ops=[(o["stage_line"], o["text"], o["samples"]) for o in base["ops"][:5]])
        entry["conservation"] = sum(x["samples"] for x in base["lines"]) + base["unattributed"] == base["total_samples"]
        for label in ("import csv", "import ncu-rep"):
            h = hots.get(label)
            entry[f"same figures as {label}"] = h is not None and figures(h) == fig
        user, library, nowhere = ncu_own_view(bundle, cid, d / "sass.csv")
        ours = {(Path(x["file"]).name, x["line"]): x["samples"] for x in base["lines"]}
        entry["ncu_view"] = {"user_lines": sorted((f, ln, n) for (f, ln), n in user.items()),
                             "library": library, "no_line": nowhere}
        entry["every user line >= ncu"] = all(ours.get(k, 0) >= n for k, n in user.items())
        entry["library samples all on user lines"] = (
            sum(ours.values()) - sum(user.values()) == library and base["unattributed"] == nowhere)
        per_capture.append(entry)
    res["captures"] = per_capture
    for e in per_capture:
        for k, v in e.items():
            if isinstance(v, bool):
                res["checks"][f"#{e['capture']} {k}"] = v
    # Proton: its own run of the script (figures differ from ncu's: another run, another sampler).
    pbundle = d / "proton.irscope"
    rc, _, s = sh(irscope_cmd("run", script, "--profile", "--profiler", "proton", "--keep-profile", d, "-o", pbundle,
                              "--no-open", "-q"), timeout, log)
    res["seconds"]["run --profile (proton)"] = round(s, 1)
    res["checks"]["run --profile proton exit 0"] = rc == 0
    if rc == 0:
        rc, out, _ = sh(irscope_cmd("profile", "ls", pbundle, "--json"), 120, log)
        for p in json.loads(out) if rc == 0 else []:
            h = hot(pbundle, int(p["capture_id"]), int(p["id"]), log)
            if h is None:
                res["checks"]["proton hot ok"] = False
                continue
            res.setdefault("proton", []).append({
                "capture": p["capture_id"], "total_samples": h["total_samples"], "unattributed": h["unattributed"],
                "lines": [(x["file"], x["line"], x["samples"], x.get("how")) for x in h["lines"]]})
            res["checks"][f"proton #{p['capture_id']} conservation"] = (
                sum(x["samples"] for x in h["lines"]) + h["unattributed"] == h["total_samples"])
    (d / "log.txt").write_text("\n".join(log))
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", default="jit_helper_call,fused_softmax,vector_add,flash_attention")
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--work", default="/tmp/irscope_gpu_check")
    ap.add_argument("--json", default=None, help="write the results here (default WORK/results.json)")
    ap.add_argument("--step-timeout", type=int, default=180)
    ap.add_argument("--budget", type=int, default=0,
                    help="seconds: start no further sample after this many (0: no limit)")
    ap.add_argument("--out", default=None,
                    help="after each sample, write results.json and tarballs of the work folder here "
                         "(gpu_check.tar.gz; the .ncu-rep reports in reports.tar.gz)")
    args = ap.parse_args()
    t_start = time.monotonic()
    work = Path(args.work)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    env: dict[str, str | None] = {"python": sys.version.split()[0]}
    for mod in ("torch", "triton"):
        try:
            env[mod] = __import__(mod).__version__
        except ImportError:
            env[mod] = None
    try:
        env["ncu"] = subprocess.run(["ncu", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
        env["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                    capture_output=True, text=True).stdout.strip()
    except OSError as exc:
        env["error"] = str(exc)
    env["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    print(json.dumps(env), flush=True)
    results = []
    for name in args.samples.split(","):
        if args.budget and time.monotonic() - t_start > args.budget:
            print(f"== {name}: skipped (past the {args.budget} s budget)", flush=True)
            continue
        results.append(check_sample(name.strip(), work, args.launches, args.step_timeout))
        Path(args.json or work / "results.json").write_text(json.dumps({"env": env, "results": results}, indent=1))
        if args.out:  # after each sample: a run stopped at its limit still returns what it made
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            (out / "results.json").write_text(json.dumps({"env": env, "results": results}, indent=1))
            subprocess.run(["tar", "czf", str(out / "gpu_check.tar.gz"), "-C", str(work), "--exclude=*.ncu-rep", "."])
            reports = sorted(str(p.relative_to(work)) for p in work.glob("*/*.ncu-rep"))
            if reports:
                subprocess.run(["tar", "czf", str(out / "reports.tar.gz"), "-C", str(work), *reports])
    print("\n| sample | check | result |\n| --- | --- | --- |")
    ok = True
    for r in results:
        for k, v in r["checks"].items():
            ok &= bool(v)
            print(f"| {r['sample']} | {k} | {'yes' if v else 'NO'} |")
    print("\n| sample | capture | launches | total | unattributed | top lines (file:line samples how) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in results:
        for e in r.get("captures", []):
            top = "; ".join(f"{Path(f).name}:{ln} {n} {how}" for f, ln, n, how in e.get("lines", [])[:4])
            print(f"| {r['sample']} | #{e['capture']} | {e.get('launches')} | {e.get('total_samples')} | "
                  f"{e.get('unattributed')} | {top} |")
        for e in r.get("proton", []):
            top = "; ".join(f"{Path(f).name}:{ln} {n} {how}" for f, ln, n, how in e["lines"][:4])
            print(f"| {r['sample']} (proton) | #{e['capture']} | | {e['total_samples']} | {e['unattributed']} | {top} |")
    print("\nall checks held" if ok else "\nSOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
