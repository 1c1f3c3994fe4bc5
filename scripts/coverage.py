"""Capture coverage across Triton versions and targets (run by hand, not in CI).

For each Triton minor version (3.0 ... newest on PyPI) this makes (or reuses) a venv
``.venvs/triton-X.Y`` with ``triton==X.Y.Z``, ``torch==2.13.0`` and ``numpy<2.4``
(``.venv`` is used for the Triton it holds, 3.6), then captures every script in
``sample_kernels/`` compile-only for every target, one ``irscope run`` per script
with every ``--target`` in that one call, into one bundle per version
(``out/coverage/triton-X.Y.irscope``), each run under a timeout.

Then it reads the bundles through the Python API and writes:
- ``docs/data/coverage.json``: every run (command, exit status, time, stderr tail),
  every capture (ok or failed, error, parser coverage of every stage) and the
  version matrix of matmul_kernel (first config, sm_90);
- ``docs/coverage.md``: the same as tables.

Runs are incremental: a (version, script, target) already recorded in the JSON is
not run again (``--force`` runs it again, into a fresh bundle for that version), so a
subset can be run now and the rest later, e.g.::

    .venv/bin/python scripts/coverage.py --versions 3.4,3.5 --targets sm_90,gfx942 --jobs 2
    .venv/bin/python scripts/coverage.py --targets sm_80,sm_100,sm_120,gfx950
    .venv/bin/python scripts/coverage.py --report-only

Cells never run are marked "not run (time)" in the report.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSIONS = ["3.0.0", "3.1.0", "3.2.0", "3.3.1", "3.4.0", "3.5.1", "3.6.0", "3.7.1", "3.8.0", "3.9.0"]
TARGETS = ["sm_80", "sm_90", "sm_100", "sm_120", "gfx942", "gfx950"]
TORCH = "torch==2.13.0"
NUMPY = "numpy<2.4"
SCRATCH = ROOT / "out" / "coverage"  # lock and temp files (ignored by git)
MATRIX_KERNEL = ("matmul_kernel", "matmul_autotune.py", "sm_90")
KEEP_MARKER = "<!-- kept by scripts/coverage.py:"
"""docs/coverage.md from the line that starts with this on is kept when the report is rewritten."""


def minor(v: str) -> str:
    return ".".join(v.split(".")[:2])


def full_version(v: str) -> str:
    for known in VERSIONS:
        if known == v or minor(known) == v:
            return known
    return v


def venv_for(v: str) -> Path:
    if minor(v) == "3.6":
        return ROOT / ".venv"
    return ROOT / ".venvs" / f"triton-{minor(v)}"


def triton_in(py: Path) -> str | None:
    if not py.exists():
        return None
    try:
        out = subprocess.run([str(py), "-c", "import triton; print(triton.__version__)"],
                             capture_output=True, text=True, timeout=120, check=False)
    except subprocess.TimeoutExpired:
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def ensure_venv(v: str, install: bool, log) -> tuple[Path | None, str]:
    """The venv's python for Triton v, made if needed. (None, why) when not there."""
    d = venv_for(v)
    py = d / "bin" / "python"
    have = triton_in(py)
    if have == v:
        return py, "reused"
    if not install:
        return None, f"no venv with triton {v} ({d.relative_to(ROOT)} has {have})"
    if d == ROOT / ".venv":
        return None, f".venv holds triton {have}, not {v}; not touching it"
    log(f"[{v}] installing triton=={v} into {d.relative_to(ROOT)}")
    if not py.exists():
        subprocess.run([str(Path(sys.base_prefix) / "bin" / "python3"), "-m", "venv", str(d)], check=True)
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        TORCH, f"triton=={v}", NUMPY], capture_output=True, text=True, check=False)
    if r.returncode != 0 or triton_in(py) != v:
        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["?"]
        return None, f"pip install failed: {tail[0]}"
    return py, "installed"


def samples() -> list[Path]:
    return sorted(p for p in (ROOT / "sample_kernels").glob("*.py"))


def bundle_path(out_dir: Path, v: str) -> Path:
    return out_dir / f"triton-{minor(v)}.irscope"


def run_one(v: str, py: Path, script: Path, targets: list[str], bundle: Path, timeout: float,
            cwd: Path = ROOT) -> dict:
    """One ``irscope run`` of SCRIPT (all TARGETS in that call) into BUNDLE, under a timeout,
    from CWD (a script that writes files, such as a tutorial's plots, runs in a scratch folder)."""
    shown = script.relative_to(ROOT) if cwd == ROOT else script.resolve()
    cmd = [str(ROOT / ".venv" / "bin" / "irscope"), "run", str(shown), "--no-open", "--python", str(py),
           *[a for t in targets for a in ("--target", t)], "-o", str(bundle), "--json", "-q"]
    t0 = time.monotonic()
    timed_out = False
    try:
        # start_new_session: on a timeout the whole process group (irscope and its child) is ended.
        p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(p.pid, 2)  # SIGINT: irscope keeps what finished
            try:
                out, err = p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                out, err = p.communicate()
        rc = p.returncode
    except OSError as e:
        out, err, rc = "", str(e), -1
    seconds = time.monotonic() - t0
    try:
        caps = json.loads(out) if out.strip() else []
    except json.JSONDecodeError:
        caps = []
    err_lines = [line for line in err.splitlines() if line.strip()]
    return {"version": v, "script": script.name, "targets": targets, "rc": rc, "timed_out": timed_out,
            "seconds": round(seconds, 1), "timeout_s": timeout, "captures": len(caps),
            "command": " ".join(shlex.quote(c) for c in cmd).replace(str(ROOT) + "/", ""),
            "stderr_tail": err_lines[-12:], "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}


import contextlib
import fcntl


@contextlib.contextmanager
def _locked(json_path: Path):
    json_path.parent.mkdir(parents=True, exist_ok=True)
    SCRATCH.mkdir(parents=True, exist_ok=True)
    with open(SCRATCH / (json_path.name + ".lock"), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def save_runs(json_path: Path, new_runs: list[dict], venvs: dict) -> None:
    with _locked(json_path):
        cur = json.loads(json_path.read_text()) if json_path.exists() else {}
        cur["runs"] = cur.get("runs", []) + new_runs
        cur["venvs"] = cur.get("venvs", {}) | venvs
        tmp = SCRATCH / (json_path.name + ".tmp")
        tmp.write_text(json.dumps(cur, indent=1))
        tmp.replace(json_path)


# -- reading the bundles ------------------------------------------------------

def telling_error(cap) -> str | None:
    """The capture's one-line error; where that line is only ptxas's repro command (as
    irscope records Triton 3.2's ptxas failures), the ptxas diagnostic from the detail."""
    err = cap.error
    if err and "Repro command" in err.splitlines()[0]:
        detail = cap.row.to_json().get("error_detail") or ""
        diag = [ln.strip() for ln in detail.splitlines() if ln.strip().startswith("ptxas") and "fatal" in ln
                or ln.strip().startswith("ptxas") and "error" in ln]
        if diag:
            return f"RuntimeError: {diag[0]} (irscope's one-line error shows only the repro command)"
    return err


def read_bundle(path: Path) -> list[dict]:
    import irscope
    out = []
    with irscope.open(str(path)) as b:
        for cap in b.captures():
            cov = {}
            for s in cap.stages:
                st = cap.stage(s)
                if st.info is None or not st.info.parsed:
                    continue
                try:
                    if st.binary:
                        continue
                    cov[s] = round(st.module.coverage, 4)
                except Exception as e:  # noqa: BLE001 - a parse failure is a finding, not a crash
                    cov[s] = f"parse error: {type(e).__name__}: {str(e)[:120]}"
            out.append({"id": cap.id, "kernel": cap.kernel, "variant": cap.variant, "target": cap.target,
                        "triton_version": cap.triton_version, "script": Path(cap.row.file or "?").name,
                        "failed": cap.failed, "error": telling_error(cap), "failed_stage": cap.row.failed_stage,
                        "stages": list(cap.stages), "coverage": cov,
                        "compile_seconds": cap.row.compile_seconds})
    return out


def version_matrix(out_dir: Path, versions: list[str]) -> dict | None:
    import irscope
    from irscope.diff.matrix import matrix
    kernel, script, target = MATRIX_KERNEL
    sides, bundles = [], []
    for v in versions:
        p = bundle_path(out_dir, v)
        if not p.exists():
            continue
        b = irscope.open(str(p))
        bundles.append(b)
        caps = [c for c in b.captures(kernel) if c.target == target and not c.failed
                and Path(c.row.file or "").name == script]
        if caps:
            sides.append((v, min(caps, key=lambda c: c.id)))  # the first config the autotuner compiled
    if not sides:
        return None
    m = matrix(sides)
    data = m.to_json()
    data["variants"] = {label: cap.variant for label, cap in sides}
    for b in bundles:
        b.close()
    return data


def _cap_key(c: dict) -> tuple:
    return (c["script"], c["target"], c["kernel"], c["variant"])


def merge_captures(recorded: list[dict], read: list[dict]) -> list[dict]:
    """Captures read from the bundle now, plus those recorded in the JSON by earlier runs
    whose bundle is gone (bundles are scratch, out/ is not kept): a cell once captured
    stays in the report. What the bundle holds wins over the record."""
    have = {_cap_key(c) for c in read}
    return [c for c in recorded if _cap_key(c) not in have] + read


def pick_matrix(recorded: dict | None, now: dict | None) -> dict | None:
    """The version matrix over the most versions: the one built now unless its bundles
    are partly gone and the recorded one covers more sides."""
    if now is None or (recorded and len(recorded.get("sides", [])) > len(now.get("sides", []))):
        return recorded
    return now


# -- the report ---------------------------------------------------------------

def first_line(s: str | None, n: int = 110) -> str:
    s = (s or "").strip().splitlines()[0] if (s or "").strip() else ""
    return s if len(s) <= n else s[: n - 1] + "…"


def run_reason(r: dict) -> str:
    if r["timed_out"]:
        return f"timed out after {r['seconds']:.0f} s"
    for line in reversed(r["stderr_tail"]):
        if line.startswith(("error", "note", "irscope:")) or "Error" in line:
            return first_line(line)
    return first_line(r["stderr_tail"][-1] if r["stderr_tail"] else f"exit {r['rc']}")


def cell(v: str, t: str, runs: dict, caps: list[dict], scripts: list[str]) -> dict:
    mine = [c for c in caps if c["target"] == t]
    ran = [s for s in scripts if (v, s, t) in runs]
    c = {"scripts_run": len(ran), "scripts": len(scripts),
         "captures_ok": sum(not x["failed"] for x in mine), "captures_failed": sum(x["failed"] for x in mine),
         "kernels_ok": len({(x["script"], x["kernel"]) for x in mine if not x["failed"]}),
         "kernels_failed": len({(x["script"], x["kernel"]) for x in mine if x["failed"]}
                               - {(x["script"], x["kernel"]) for x in mine if not x["failed"]}),
         "reasons": [], "coverage_min": None, "coverage_mean": None, "coverage_below_1": []}
    reasons: dict[str, list[str]] = {}
    for x in mine:
        if x["failed"]:
            where = f" (failed in {x['failed_stage']})" if x.get("failed_stage") else ""
            scripts_ = reasons.setdefault(first_line(x["error"], 140) + where, [])
            if x["script"] not in scripts_:
                scripts_.append(x["script"])
    for s in ran:
        r = runs[(v, s, t)]
        if not any(x["script"] == s for x in mine):
            reasons.setdefault(f"nothing captured ({run_reason(r)})", []).append(s)
        elif r["timed_out"]:
            reasons.setdefault(f"timed out after {r['seconds']:.0f} s (what finished is kept)", []).append(s)
    c["reasons"] = [{"reason": k, "scripts": v_} for k, v_ in reasons.items()]
    vals = [(x["kernel"], s, cv) for x in mine for s, cv in x["coverage"].items()]
    nums = [cv for _, _, cv in vals if isinstance(cv, (int, float))]
    if nums:
        c["coverage_min"] = min(nums)
        c["coverage_mean"] = round(sum(nums) / len(nums), 4)
        c["coverage_stages"] = len(nums)
    c["coverage_below_1"] = sorted({f"{k} {s}: {cv}" for k, s, cv in vals if not (isinstance(cv, (int, float)) and cv >= 1.0)})
    return c


def cell_text(c: dict | None) -> str:
    if c is None or c["scripts_run"] == 0:
        return "not run (time)"
    s = f"{c['kernels_ok']} ok"
    if c["kernels_failed"] or c["captures_failed"]:
        s += f" / {c['kernels_failed']} failed"
    s += f" [{c['captures_ok']} variants]"
    if c["scripts_run"] < c["scripts"]:
        s += f" ({c['scripts_run']}/{c['scripts']} scripts run; rest not run (time))"
    return s


KNOWN_CAUSES = [
    ("ld.lld not found",
     ("`ROCm linker /opt/rocm/llvm/bin/ld.lld not found`: the AMD backend of these Tritons links the "
     "HSACO with ROCm's `ld.lld`, which the wheel does not ship (no `ld.lld` under `triton/` in their "
     "venvs) and this machine has no ROCm. It is raised when the backend is set up, before any stage, "
     "so the capture holds only the error. An environment limit, not irscope's: with ROCm installed "
     "(or `TRITON_HIP_LLD_PATH` set) these would compile; Tritons that capture gfx942 here need no "
     "external linker.")),
    ("is not defined for option 'gpu-name'",
     ("`ptxas fatal: Value 'sm_1x0' is not defined for option 'gpu-name'`: the `ptxas` this Triton ships "
     "predates the architecture, so the cubin step fails; TTIR, TTGIR, LLVM IR and PTX are kept (a target "
     "the version does not support).")),
    ("AccelerateMatmul.cpp",
     ("`AccelerateMatmul.cpp: getMMAVersionSafe ... computeCapability not supported`: the TTGIR pass "
      "that picks the tensor-core MMA version has no case for compute capability 100 or 120 in these "
      "Tritons (Blackwell support came in 3.3), so it asserts and the compiler process aborts; the TTIR "
      "is kept. A target the version does not support, in a kernel with a `tl.dot`.")),
    ("Cannot select: intrinsic %llvm.nvvm.shfl.sync",
     ("`LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32`: the NVPTX backend of the "
      "LLVM these Tritons bundle cannot emit a warp shuffle for sm_100 / sm_120, so the kernels with a "
      "reduction abort in the PTX step; TTIR, TTGIR and LLVM IR are kept. Also a target the version "
      "does not support.")),
    ("Block pointers have been removed",
     ("`Block pointers have been removed in favor of the tensor descriptor API`: `tl.make_block_ptr` "
     "is gone from this Triton; `block_ptr_matmul.py` uses it (a sample using an API the version lacks).")),
]


def write_report(data: dict, md_path: Path) -> None:
    versions, targets = data["versions"], data["targets"]
    cells = data["cells"]
    L = []
    L.append("# Capture coverage across Triton versions and targets\n")
    m = data["method"]
    inv = [i for i in data.get("invocations", []) if "--report-only" not in i] or [m["command"]]
    L.append(f"Made by scripts/coverage.py, last run {m['date']}, on {m['machine']} (a machine shared with "
             "other work, so times are rough). Invocations:\n")
    L.extend(f"    .venv/bin/{i}" for i in inv)
    L.append("")
    L.append("Every script in `sample_kernels/` is captured compile-only (no GPU: fake tensors, launches compiled, "
             "not executed) with one `irscope run SCRIPT --python .venvs/triton-X.Y/bin/python --target T ... "
             "-o out/coverage/triton-X.Y.irscope --json -q` per script and version (all targets in that one call), "
             f"each under a timeout (600 s here; `--timeout`); venvs hold `triton==X.Y.Z`, `{TORCH}`, `{NUMPY}` "
             "(Triton 3.6 is `.venv`). The bundles are then read with the Python API. Raw results: "
             "[data/coverage.json](data/coverage.json).\n")
    L.append("A cell counts kernels (script, kernel) with a variant captured (`ok`) and kernels whose "
             "captures all failed (`failed`), and in brackets the variants (captures) that compiled (12 for the "
             "full set at one target: matmul_autotune has 4 configs, flash_attention 2); cells marked \"not run (time)\" were not attempted in the time "
             "available: they are not failures.\n")
    L.append("## (a) What was captured\n")
    L.append("| Triton | " + " | ".join(targets) + " |")
    L.append("| --- " * (len(targets) + 1) + "|")
    for v in versions:
        L.append(f"| {v} | " + " | ".join(cell_text(cells.get(v, {}).get(t)) for t in targets) + " |")
    L.append("")
    L.append("Failures, one line each (script: reason):\n")
    any_reason = False
    for v in versions:
        for t in targets:
            c = cells.get(v, {}).get(t)
            if c and c["reasons"]:
                any_reason = True
                for r in c["reasons"]:
                    n = len(r["scripts"])
                    who = (f"all {n} scripts run" if n == c["scripts_run"] and n > 1 else ", ".join(r["scripts"]))
                    L.append(f"- **{v} {t}**, {who}: {r['reason']}")
    if not any_reason:
        L.append("- none")
    L.append("")
    seen = " ".join(r["reason"] for v in versions for t in targets
                    for r in (cells.get(v, {}).get(t) or {}).get("reasons", []))
    causes = [why for pat, why in KNOWN_CAUSES if pat in seen]
    if causes:
        L.append("What the failures mean:\n")
        L.extend(f"- {why}" for why in causes)
        L.append("")
    L.append("## (b) Parser coverage\n")
    L.append("`Module.coverage` (share of lines the parser understood) of every parsed stage of every capture "
             "in the cell: minimum / mean over (capture, stage), and how many were parsed.\n")
    L.append("| Triton | " + " | ".join(targets) + " |")
    L.append("| --- " * (len(targets) + 1) + "|")
    for v in versions:
        row = []
        for t in targets:
            c = cells.get(v, {}).get(t)
            if c is None or c["scripts_run"] == 0:
                row.append("not run (time)")
            elif c["coverage_min"] is None:
                row.append("nothing parsed")
            else:
                row.append(f"{c['coverage_min']:.4f} / {c['coverage_mean']:.4f} ({c['coverage_stages']})")
        L.append(f"| {v} | " + " | ".join(row) + " |")
    L.append("")
    below = [(v, t, s) for v in versions for t in targets
             for s in (cells.get(v, {}).get(t) or {}).get("coverage_below_1", [])]
    if below:
        L.append("Stages below 1.0:\n")
        L.extend(f"- {v} {t}: {s}" for v, t, s in below)
        L.append("")
    L.append("## (c) One kernel across versions\n")
    mx = data.get("matrix")
    k, sc, tg = MATRIX_KERNEL
    if not mx:
        L.append("not run (time)\n")
    else:
        labels = [s["label"] for s in mx["sides"]]
        variants = set(mx["variants"].values())
        vtext = (f"variant `{next(iter(variants))}` on every side" if len(variants) == 1 else
                 "variants: " + "; ".join(f"{lab}: `{var}`" for lab, var in mx["variants"].items()))
        L.append(f"`{k}` of `sample_kernels/{sc}`, first autotune config (the first capture of the kernel "
                 f"in each bundle), {tg}, built with `irscope.diff.matrix.matrix(...)` over the version "
                 f"bundles; {vtext}.\n")
        missing = [v for v in versions if v not in labels]
        if missing:
            L.append(f"Versions without this capture: {', '.join(missing)} (see (a)).\n")
        L.append("| figure | " + " | ".join(labels) + " |")
        L.append("| --- " * (len(labels) + 1) + "|")
        for r in mx["rows"]:
            vals = ["" if x is None else (f"{x:.2f}" if isinstance(x, float) else str(x)) for x in r["values"]]
            name = f"**{r['name']}**" if r["varies"] else r["name"]
            L.append(f"| {name} | " + " | ".join(vals) + " |")
        spill_none = [s["label"] for s in mx["sides"] if s.get("spills") is None]
        if spill_none:
            L.append(f"\nspills blank ({', '.join(spill_none)}): the capture has no spill figure "
                     "(its resources came from `cuobjdump` alone, no `ptxas -v` line was found).")
        L.append("\nBold: the figure differs between versions. `ops.*`: ops per parsed stage; "
                 "`ptx.*` / `sass.*`: instructions by class; compile_seconds is wall time on this "
                 "2-core machine, shared with other work, so only a rough figure.\n")
    L.append("## Runs\n")
    L.append("| Triton | script | targets | exit | seconds | captures |")
    L.append("| --- | --- | --- | --- | --- | --- |")
    for r in sorted(data["runs"], key=lambda r: (VERSIONS.index(r["version"]) if r["version"] in VERSIONS else 99,
                                                 r["script"], r["targets"])):
        L.append(f"| {r['version']} | {r['script']} | {','.join(r['targets'])} | "
                 f"{'timeout' if r['timed_out'] else r['rc']} | {r['seconds']:.0f} | {r['captures']} |")
    if data.get("venvs"):
        L.append("\nVenvs: " + "; ".join(f"{v}: {why}" for v, why in data["venvs"].items()))
    # Sections other scripts write (scripts/lit_coverage.py's) follow KEEP_MARKER: kept as they are.
    old = md_path.read_text() if md_path.exists() else ""
    kept = old[old.index(KEEP_MARKER):] if KEEP_MARKER in old else ""
    md_path.write_text("\n".join(L) + "\n" + ("\n" + kept if kept else ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--versions", default=",".join(VERSIONS), help="comma list, X.Y or X.Y.Z")
    ap.add_argument("--targets", default=",".join(TARGETS), help="comma list")
    ap.add_argument("--jobs", type=int, default=1, help="versions run in parallel")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per irscope run")
    ap.add_argument("--out-dir", default=str(ROOT / "out" / "coverage"))
    ap.add_argument("--json", default=str(ROOT / "docs" / "data" / "coverage.json"))
    ap.add_argument("--md", default=str(ROOT / "docs" / "coverage.md"))
    ap.add_argument("--scripts", default=None, help="comma list of sample names (default: all)")
    ap.add_argument("--no-install", action="store_true", help="skip versions whose venv is not ready")
    ap.add_argument("--report-only", action="store_true", help="run nothing; rebuild the report")
    ap.add_argument("--force", action="store_true", help="run again what is recorded (fresh bundles)")
    ap.add_argument("--deadline", default=None, help="HH:MM (local time): start no run after it")
    a = ap.parse_args()
    if a.deadline:
        hh, mm = map(int, a.deadline.split(":"))
        now = _dt.datetime.now()
        a.deadline = now.replace(hour=hh, minute=mm, second=0, microsecond=0).timestamp()
    versions = [full_version(v.strip()) for v in a.versions.split(",") if v.strip()]
    targets = [t.strip() for t in a.targets.split(",") if t.strip()]
    out_dir = Path(a.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = Path(a.json), Path(a.md)
    scripts = samples()
    if a.scripts:
        want = {s if s.endswith(".py") else s + ".py" for s in a.scripts.split(",")}
        scripts = [s for s in scripts if s.name in want]

    old = json.loads(json_path.read_text()) if json_path.exists() else {}
    runs_list: list[dict] = old.get("runs", [])
    venvs: dict = old.get("venvs", {})
    log = lambda msg: print(f"{_dt.datetime.now():%H:%M:%S} {msg}", flush=True)

    if a.force:
        for v in versions:
            bundle_path(out_dir, v).unlink(missing_ok=True)
        runs_list = [r for r in runs_list if r["version"] not in versions]
        with _locked(json_path):
            cur = json.loads(json_path.read_text()) if json_path.exists() else {}
            cur["runs"] = [r for r in cur.get("runs", []) if r["version"] not in versions]
            json_path.write_text(json.dumps(cur, indent=1))

    def do_version(v: str) -> list[dict]:
        done = {(r["script"], t) for r in runs_list if r["version"] == v for t in r["targets"]}
        todo = [(s, [t for t in targets if (s.name, t) not in done]) for s in scripts]
        todo = [(s, ts) for s, ts in todo if ts]
        if not todo:
            return []
        py, why = ensure_venv(v, not a.no_install, log)
        venvs[v] = why
        if py is None:
            log(f"[{v}] skipped: {why}")
            return []
        new = []
        for s, ts in todo:
            if a.deadline and time.time() > a.deadline:
                log(f"[{v}] {s.name}: not started, past --deadline")
                continue
            log(f"[{v}] {s.name} {','.join(ts)}")
            r = run_one(v, py, s, ts, bundle_path(out_dir, v), a.timeout)
            log(f"[{v}] {s.name}: exit {r['rc']}{' (timeout)' if r['timed_out'] else ''}, "
                f"{r['captures']} captures, {r['seconds']:.0f} s")
            new.append(r)
            # Save as we go, so an interrupted session keeps what finished; merged under a
            # file lock, so two invocations (different versions) can share the JSON.
            with lock:
                runs_list.append(r)
                save_runs(json_path, [r], {v: why})
        return new

    import threading
    lock = threading.Lock()
    if not a.report_only:
        with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            list(ex.map(do_version, versions))
    with _locked(json_path):
        cur = json.loads(json_path.read_text()) if json_path.exists() else {}
    runs_list = cur.get("runs", runs_list)
    venvs = cur.get("venvs", venvs) | venvs

    # The report covers every version and target ever recorded, in the canonical order.
    # Every known version is listed, so what was not run shows as "not run (time)".
    all_versions = list(VERSIONS) + sorted(({r["version"] for r in runs_list} | set(versions)) - set(VERSIONS))
    all_targets = [t for t in TARGETS] + sorted({t for r in runs_list for t in r["targets"]} - set(TARGETS))
    runs = {}
    for r in runs_list:
        for t in r["targets"]:
            runs[(r["version"], r["script"], t)] = r
    script_names = [s.name for s in samples()]
    captures, cells = {}, {}
    for v in all_versions:
        p = bundle_path(out_dir, v)
        caps = merge_captures(old.get("captures", {}).get(v, []), read_bundle(p) if p.exists() else [])
        captures[v] = caps
        cells[v] = {t: cell(v, t, runs, caps, script_names) for t in all_targets}
    data = {
        "method": {"command": "python scripts/coverage.py " + " ".join(sys.argv[1:]),
                   "date": _dt.date.today().isoformat(),
                   "machine": f"{os.cpu_count()} cores, no GPU, {platform.system()} {platform.machine()}, "
                              f"Python {platform.python_version()}",
                   "timeout_s": a.timeout, "torch": TORCH, "numpy": NUMPY},
        "versions": all_versions, "targets": all_targets, "venvs": venvs, "runs": runs_list,
        "cells": cells, "captures": captures,
        "matrix": pick_matrix(old.get("matrix"), version_matrix(out_dir, all_versions))}
    with _locked(json_path):
        cur = json.loads(json_path.read_text()) if json_path.exists() else {}
        data["runs"] = cur.get("runs", runs_list)  # runs another invocation added meanwhile stay
        data["invocations"] = cur.get("invocations", []) + [data["method"]["command"] + f"  ({data['method']['date']})"]
        tmp = SCRATCH / (json_path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        tmp.replace(json_path)
    write_report(data, md_path)
    log(f"wrote {json_path} and {md_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
