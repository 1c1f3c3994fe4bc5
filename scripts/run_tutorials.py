"""Triton's own tutorials, as written, under ``irscope run`` with no GPU (run by hand, not in CI).

For each Triton version we capture, the tutorials (``python/tutorials/NN-*.py``) are taken
from a clone of Triton's repository (``--triton-git``, a bare clone is enough) at the
commit of that release (``PICKS``: where the release branch left main, found by matching
the installed wheel's Python files against main's history), and each is run unmodified,
compile-only, once per target::

    irscope run NN-name.py --python .venvs/triton-X.Y/bin/python --target T -o BUNDLE --json -q

from a scratch folder (the tutorials write plots and CSVs to ``.``), with matplotlib, pandas,
pytest and tabulate (what ``triton.testing.perf_report`` and the tutorials import) installed into
``out/tutorials/deps`` and put on ``PYTHONPATH``, never into a venv. Each run has a timeout;
on a timeout irscope keeps what finished.

Then the bundles are read (``irscope ls BUNDLE --json``) and compared with the kernels each
tutorial launches on that target (``EXPECTED``, counted by reading the tutorials), and the
results are written to ``docs/data/tutorials.json`` and to the section "(e) Triton's
tutorials as written" of ``docs/coverage.md``. Runs are incremental, as in
``scripts/coverage.py`` (``--force`` runs again)::

    .venv/bin/python scripts/run_tutorials.py --triton-git /path/to/triton.git --versions 3.6 --timeout 300
    .venv/bin/python scripts/run_tutorials.py --report-only
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from coverage import ROOT, full_version, minor, run_one, triton_in, venv_for  # noqa: E402
from tutorial_expectations import CONFIG_FIELDS, EXPECTED, NOT_SUPPORTED, expected_configs, expected_kernels  # noqa: E402

DEPS = ["matplotlib", "pandas<3", "numpy<2.4", "pytest", "tabulate"]
TARGETS = ["sm_90", "sm_80", "gfx942"]
OUT = ROOT / "out" / "tutorials"
SECTION = "## (e) Triton's tutorials as written"


@dataclass(frozen=True)
class Pick:
    """The commit of Triton's main branch whose tutorials a release ships."""

    version: str  # X.Y.Z on PyPI
    commit: str | None  # None: this release's tutorials are not in the history read
    date: str
    why: str


PICKS: dict[str, Pick] = {
    "3.0": Pick("3.0.0", "03b84666a1991a0addd6b0d80c911de98b7e6c31", "2024-05-31",
                "the main commit whose python/triton/*.py differ least from the 3.0.0 wheel's "
                "(2128 lines; release uploaded 2024-07-19); tutorials identical from 2024-05-31 to 2024-06-03"),
    "3.2": Pick("3.2.0", "152ef2deb8852d5c84f9ffba217b3a7c8f398c5f", "2024-10-25",
                "the main commit whose python/triton/*.py differ least from the 3.2.0 wheel's "
                "(release uploaded 2025-01-22); tutorials identical from 2024-10-24 to 2024-10-30"),
    "3.6": Pick("3.6.0", "4b184cccbb42c3aa5f24e34c39c5358636b3e2bd", "2025-11-21",
                "the newest of the main commits (2025-11-19 to 2025-11-21) that share the most "
                "python/triton/*.py files with the 3.6.0 wheel (80 of 110; release uploaded 2026-01-20); "
                "tutorials identical over that range"),
    "3.9": Pick("3.9.0", None, "",
                "not in the history read: 3.9.0 was uploaded 2026-10-27 and its release branch left main "
                "after the newest upstream commit of the clone (no main commit shares more than 29 of the "
                "wheel's 149 python/triton/*.py files)"),
}


def git(git_dir: Path, *args: str) -> str:
    """Run git on the clone GIT_DIR and return stdout (raises on failure)."""
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], capture_output=True, text=True,
                          check=True).stdout


def full_commit(git_dir: Path, commit: str) -> str:
    return git(git_dir, "rev-parse", commit).strip()


LIBS = ["third_party/nvidia/backend/lib", "third_party/amd/backend/lib"]
"""Read by tutorial 07 relative to its own file (``../../third_party/...``), as in a checkout."""


def extract(git_dir: Path, commit: str, dest: Path) -> list[Path]:
    """Write the tutorials of COMMIT, unmodified, into DEST/python/tutorials, and the device
    libraries they read by path into DEST/third_party: the layout of a checkout."""
    out = []
    for path in git(git_dir, "ls-tree", "--name-only", commit, "python/tutorials/", *[d + "/" for d in LIBS]).split():
        f = dest / path
        f.parent.mkdir(parents=True, exist_ok=True)
        if path.startswith("third_party/"):
            f.write_bytes(subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"],
                                         capture_output=True, check=True).stdout)
        elif re.match(r"\d\d-.*\.py$", f.name):
            f.write_text(git(git_dir, "show", f"{commit}:{path}"))
            out.append(f)
    return sorted(out)


def ensure_deps(log) -> Path:
    """matplotlib, pandas, pytest and tabulate in out/tutorials/deps (all venvs run Python 3.11)."""
    d = OUT / "deps"
    have = all(any((d / n).exists() for n in names) for names in (("matplotlib",), ("pandas",), ("tabulate", "tabulate.py")))
    if not have:
        log(f"installing {' '.join(DEPS)} into {d.relative_to(ROOT)}")
        subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "pip", "install", "-q",
                        "--disable-pip-version-check", "--target", str(d), *DEPS], check=True)
    return d


def bundle_for(v: str, tutorial: str, target: str) -> Path:
    return OUT / f"triton-{v}" / f"{Path(tutorial).stem}.{target}.irscope"


def read_captures(bundle: Path) -> list[dict]:
    """The bundle's captures, as ``irscope ls --json`` gives them (kernel, variant, error...)."""
    if not bundle.exists():
        return []
    r = subprocess.run([str(ROOT / ".venv" / "bin" / "irscope"), "ls", str(bundle), "--json"],
                       capture_output=True, text=True, check=False)
    if r.returncode != 0:
        return []
    return [{"kernel": c["kernel"], "variant": c["variant"], "target": c["target"],
             "failed": c.get("error") is not None,  # ("complete" is the run's: false after a timeout)
             "error": (c.get("error") or "").splitlines()[0][:300] if c.get("error") else None,
             "failed_stage": c.get("failed_stage"), "notes": c.get("notes") or []} for c in json.loads(r.stdout)]


# -- the JSON record ------------------------------------------------------------

def load(json_path: Path) -> dict:
    return json.loads(json_path.read_text()) if json_path.exists() else {}


def save(json_path: Path, data: dict) -> None:
    json_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = json_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(json_path)


def key(v: str, tutorial: str, target: str) -> str:
    return f"{v}|{tutorial}|{target}"


# -- cells --------------------------------------------------------------------

def reason_of(run: dict) -> str:
    """The one line that says why a run ended badly: irscope's error line, else the last
    exception line of the script's output."""
    if run.get("timed_out"):
        return f"timed out after {run['seconds']:.0f} s (what finished is kept)"
    tail = run.get("stderr_tail") or []
    for line in reversed(tail):
        if line.startswith(("irscope: error", "error:")):
            return line.strip()[:220]
    for line in reversed(tail):
        if re.match(r"^\w+(\.\w+)*(Error|Exception)\b", line.strip()):
            return line.strip()[:220]
    return (tail[-1].strip()[:220] if tail else f"exit {run.get('rc')}")


def cell(v: str, tutorial: str, target: str, data: dict) -> dict:
    """Expected vs captured kernels for one (version, tutorial, target), and why not all."""
    stem = Path(tutorial).stem
    ns = NOT_SUPPORTED.get((stem[:2], v, target)) or NOT_SUPPORTED.get((stem[:2], v, "*"))
    if ns:
        return {"status": "not supported", "reason": ns}
    run = data.get("runs", {}).get(key(v, tutorial, target))
    if run is None:
        return {"status": "not run (time)"}
    exp = expected_kernels(stem[:2], v, target)
    caps = data.get("captures", {}).get(key(v, tutorial, target), [])
    tuned = expected_configs(stem[:2], v, target)

    def refused(x: dict) -> bool:
        # Triton refused to launch it (OutOfResources), or, for an autotuned kernel, the config
        # fails a tl.static_assert: the autotuner skips both on the GPU too. Not a failure.
        err = x["error"] or ""
        return x["failed"] and ("OutOfResources" in err or x["kernel"] in tuned and "CompileTimeAssertion" in err)

    ok = sorted({c["kernel"] for c in caps if not c["failed"]})
    failed = sorted({c["kernel"] for c in caps if c["failed"]} - set(ok))
    errors = sorted({f"{c['kernel']}: {c['error']}" for c in caps if c["failed"] and not refused(c)})
    c = {"status": "ran", "rc": run["rc"], "timed_out": run["timed_out"], "seconds": run["seconds"],
         "expected": exp, "captured": ok, "failed_kernels": failed,
         "missing": [k for k in exp if k not in ok] if exp is not None else None,
         "unexpected": [k for k in ok if exp is not None and k not in exp],
         "variants": sum(not x["failed"] for x in caps),
         # A config Triton refused to launch (OutOfResources) is refused on that GPU too: not a failure.
         "variants_refused": sum(refused(x) for x in caps),
         "variants_failed": sum(x["failed"] and not refused(x) for x in caps),
         "capture_errors": errors[:6]}
    configs = {}
    for kern, n in tuned.items():
        # Distinct configs compiled (or refused as on the GPU): the config fields of the variant labels.
        seen = {tuple(f for f in x["variant"].split(",") if re.match(CONFIG_FIELDS, f)) for x in caps
                if x["kernel"] == kern and (not x["failed"] or refused(x))}
        configs[kern] = {"expected": n, "compiled": len(seen)}
    c["configs"] = configs
    stop = next((m.group(1) for line in run.get("stderr_tail") or []
                 for m in [re.search(r"result check at (\S+) was skipped", line)] if m), None)
    # Exit 0, but the script ended at a line that reads tensor values: what follows it
    # (often the benchmark, with its other specialisations) never ran.
    c["stopped_at"] = stop
    # A script that raised after its launches is a failure (exit 3); this catches the line either way.
    failed_note = next((line.strip() for line in run.get("stderr_tail") or [] if "script failed at" in line), None)
    c["script_failed"] = failed_note
    c["complete"] = (exp is not None and not c["missing"] and run["rc"] == 0 and not run["timed_out"]
                     and not failed_note)
    c["reason"] = None if c["complete"] else reason_of(run) if (run["rc"] != 0 or run["timed_out"]) else (
        failed_note[:240] if failed_note else
        "; ".join(errors[:2]) if errors else
        f"exit 0, but the script ended at {stop}, a line that reads tensor values (compile-only tensors hold "
        f"none), before launching the rest" if stop and c["missing"] else
        "exit 0 but kernels missing" if c["missing"] else None)
    return c


def cell_text(target: str, c: dict) -> str:
    if c["status"] != "ran":
        return f"{target} {c['status']}"
    exp = c["expected"]
    n = f"{len([k for k in c['captured'] if exp is None or k in exp])}/{len(exp) if exp is not None else '?'}"
    s = f"{target} {n} [{c['variants']} var]"
    cfg = c.get("configs") or {}
    if cfg:
        s += " (configs " + ", ".join(f"{x['compiled']}/{x['expected']}" for x in cfg.values()) + ")"
    if c["timed_out"]:
        s += " (timeout)"
    elif c["rc"] != 0:
        s += f" (exit {c['rc']})"
    elif c.get("script_failed"):
        s += " (script failed, exit 0)"
    if c["variants_failed"]:
        s += f" ({c['variants_failed']} failed)"
    if c.get("variants_refused"):
        s += f" ({c['variants_refused']} refused)"
    if c.get("stopped_at"):
        s += f" (stopped at :{c['stopped_at'].rsplit(':', 1)[-1]})"
    return s


# -- the report ---------------------------------------------------------------

MEANING = [
    "A cell reads `target captured/expected [variants]`: the distinct kernels the tutorial launches on "
    "that target (by reading it, `scripts/tutorial_expectations.py`) that have a complete capture in the "
    "bundle, and how many captures (autotune configs, specialisations) compiled; `(configs c/n)`: for each "
    "autotuned kernel, the distinct autotune configs compiled (or refused) of the n its autotuner has. `(exit N)`: irscope's "
    "exit status was not 0 (the script stopped, see the failures); `(timeout)`: the run was stopped at the "
    "timeout, and what compiled before is kept; `(K failed)`: captures with an error; `(K refused)`: autotune "
    "configs Triton refused to launch (OutOfResources: more shared memory than the target's device has) or "
    "whose `tl.static_assert` fails (CompileTimeAssertionFailure), which the autotuner skips on that GPU too; `(stopped at :N)`: see below.",
    "\"not supported\": the tutorial needs what this Triton or target lacks (an API, a GPU "
    "generation), or this Triton cannot compile for the target on this machine; not an irscope failure.",
    "A failure is an irscope failure when the tutorial runs on that Triton and target on a real GPU "
    "but not under `irscope run` with no GPU: the compile-only environment lacks something the "
    "tutorial calls, or the script stops at a line that reads tensor values (compile-only tensors are "
    "fake: shapes and strides, no data) before it launches all its kernels. A value read after the first "
    "compile (a result check) gets a placeholder and the script goes on (docs/user-guide.md, result checks "
    "in compile-only runs); a cell marked `(stopped at :N)` comes from a run of an irscope that stopped "
    "there instead (the run's date is in data/tutorials.json): `--force` runs it again. A timeout is this machine's "
    "limit (2 cores shared with other work; every autotune config of every specialisation compiles), not "
    "an irscope failure: the kernels compiled before it are kept and counted.",
]


def write_section(data: dict, md_path: Path, versions: list[str], tutorials: dict[str, list[str]]) -> None:
    """Write (or replace) section (e) of docs/coverage.md; the rest of the file is kept."""
    L = [SECTION, ""]
    L.append("Triton's tutorials (`python/tutorials/NN-*.py` of its repository), unmodified, under `irscope "
             "run --target T` with no GPU, for sm_90, sm_80 and gfx942, with each Triton we capture whose "
             "tutorials the clone holds. Made by `scripts/run_tutorials.py` (run by hand: Triton's repository "
             "is not in CI), raw results in [data/tutorials.json](data/tutorials.json). Each tutorial runs once "
             "per target, from a scratch folder, under a timeout; matplotlib, pandas, pytest and tabulate come from "
             "`out/tutorials/deps` on `PYTHONPATH`.\n")
    L.append("    .venv/bin/python scripts/run_tutorials.py --triton-git triton.git --versions 3.6 --timeout 300\n"
             "    .venv/bin/python scripts/run_tutorials.py --report-only\n")
    L.append("Tutorials of each version: the commit of Triton's main branch where that release branched, found "
             "by matching the installed wheel's `python/triton/*.py` against main's history:\n")
    for v in versions:
        p = PICKS[v]
        at = f"`{p.commit[:10]}` ({p.date})" if p.commit else "none"
        L.append(f"- **{p.version}**: {at}: {p.why}.")
    L.append("")
    for line in MEANING:
        L.append(line + "\n")
    vs = [v for v in versions if PICKS[v].commit]
    allt = sorted({t for v in vs for t in tutorials.get(v, [])})
    L.append("| tutorial | " + " | ".join(PICKS[v].version for v in vs) + " |")
    L.append("| --- " * (len(vs) + 1) + "|")
    fails: list[str] = []
    stopped: list[str] = []
    for t in allt:
        row = []
        for v in vs:
            if v not in tutorials:
                row.append("not run (time)")
                continue
            if t not in tutorials[v]:
                row.append("not in this version")
                continue
            parts = []
            for tg in TARGETS:
                c = cell(v, t, tg, data)
                parts.append(cell_text(tg, c))
                if c["status"] == "ran" and not c["complete"]:
                    miss = f"; missing {', '.join(c['missing'])}" if c.get("missing") else ""
                    fails.append(f"- **{Path(t).stem} {PICKS[v].version} {tg}**: {c['reason'] or '?'}{miss}")
                elif c["status"] == "ran" and c.get("stopped_at"):
                    stopped.append(f"- **{Path(t).stem} {PICKS[v].version} {tg}**: at {c['stopped_at']}")
            row.append(", ".join(parts))
        L.append(f"| {Path(t).stem} | " + " | ".join(row) + " |")
    L.append("")
    L.append("Failures, one line each (tutorial, Triton, target: the reason):\n")
    L.extend(fails or ["- none"])
    L.append("")
    if stopped:
        L.append("Every expected kernel captured, exit 0, but the script ended early, at a line that reads "
                 "tensor values (a result check: compile-only tensors hold none), so what follows it (the "
                 "benchmark's other sizes and their specialisations) was not compiled:\n")
        L.extend(stopped)
        L.append("")
    by_reason: dict[str, dict[tuple[str, str], list[str]]] = {}
    for (tut, v, tg), why in sorted(NOT_SUPPORTED.items()):
        if v in vs:
            by_reason.setdefault(why, {}).setdefault((PICKS[v].version, tg if tg != "*" else "all targets"), []).append(tut)
    if by_reason:
        L.append("Not supported (not irscope failures):\n")
        for why, where in by_reason.items():
            L.append("- " + "; ".join(f"{', '.join(tuts)} on {ver} {tg}" for (ver, tg), tuts in where.items())
                     + f": {why}.")
        L.append("")
    text = md_path.read_text() if md_path.exists() else ""
    if SECTION in text:
        start = text.index(SECTION)
        nxt = text.find("\n## ", start + len(SECTION))
        text = text[:start] + "\n".join(L) + ("\n" + text[nxt + 1:] if nxt >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + "\n".join(L)
    md_path.write_text(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--versions", default=",".join(PICKS), help="comma list of X.Y")
    ap.add_argument("--targets", default=",".join(TARGETS), help="comma list")
    ap.add_argument("--tutorials", default=None, help="comma list of tutorial numbers (01,05) or names")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per irscope run (one target)")
    ap.add_argument("--triton-git", default=None, help="a clone of triton-lang/triton (bare is enough)")
    ap.add_argument("--json", default=str(ROOT / "docs" / "data" / "tutorials.json"))
    ap.add_argument("--md", default=str(ROOT / "docs" / "coverage.md"))
    ap.add_argument("--force", action="store_true", help="run again what is recorded")
    ap.add_argument("--deadline", default=None, help="HH:MM (local time): start no run after it")
    ap.add_argument("--report-only", action="store_true", help="run nothing; rebuild the report")
    a = ap.parse_args()

    def log(msg: str) -> None:
        print(f"[{_dt.datetime.now():%H:%M:%S}] {msg}", flush=True)

    versions = [minor(v) for v in a.versions.split(",") if v]
    unknown = [v for v in versions if v not in PICKS]
    if unknown:
        print(f"error: no tutorial commit known for {', '.join(unknown)} (known: {', '.join(PICKS)})", file=sys.stderr)
        return 2
    targets = [t for t in a.targets.split(",") if t]
    want = [w for w in (a.tutorials or "").split(",") if w]
    json_path, md_path = Path(a.json), Path(a.md)
    data = load(json_path)
    data.setdefault("runs", {})
    data.setdefault("captures", {})
    data.setdefault("tutorials", {})
    if not a.report_only:
        if not a.triton_git:
            print("error: --triton-git DIR is needed to run (or --report-only)", file=sys.stderr)
            return 2
        git_dir = Path(a.triton_git)
        deps = ensure_deps(log)
        os.environ["PYTHONPATH"] = os.pathsep.join([str(deps)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
        os.environ["MPLBACKEND"] = "Agg"  # plt.show() must not wait for a window
        for v in versions:
            pick = PICKS[v]
            if pick.commit is None:
                log(f"[{v}] skipped: {pick.why}")
                continue
            py = venv_for(v) / "bin" / "python"
            have = triton_in(py)
            if have != full_version(v) and minor(have or "") != v:
                log(f"[{v}] skipped: {py} has triton {have}")
                continue
            commit = full_commit(git_dir, pick.commit)
            files = extract(git_dir, commit, OUT / f"triton-{v}" / "triton")
            data["tutorials"][v] = [f.name for f in files]
            data.setdefault("commits", {})[v] = commit
            work = OUT / f"triton-{v}" / "work"
            work.mkdir(parents=True, exist_ok=True)
            for f in files:
                if want and not any(f.name.startswith(w) or f.stem == w for w in want):
                    continue
                for t in targets:
                    k = key(v, f.name, t)
                    if NOT_SUPPORTED.get((f.name[:2], v, t)) or NOT_SUPPORTED.get((f.name[:2], v, "*")):
                        continue
                    if k in data["runs"] and not a.force:
                        continue
                    if a.deadline and f"{_dt.datetime.now():%H:%M}" >= a.deadline:
                        log(f"[{v}] {f.name} {t}: not started (past --deadline {a.deadline})")
                        continue
                    b = bundle_for(v, f.name, t)
                    b.unlink(missing_ok=True)
                    log(f"[{v}] {f.name} {t} ...")
                    r = run_one(full_version(v), py, f, [t], b, a.timeout, cwd=work)
                    data["runs"][k] = r
                    data["captures"][k] = read_captures(b)
                    # Another invocation (other versions) may have saved meanwhile: keep its runs.
                    cur = load(json_path)
                    for part in ("runs", "captures"):
                        data[part] = cur.get(part, {}) | data[part]
                    log(f"[{v}] {f.name} {t}: exit {r['rc']}{' (timeout)' if r['timed_out'] else ''}, "
                        f"{r['captures']} captures, {r['seconds']:.0f} s")
                    save(json_path, data)  # as we go: an interrupted session keeps what finished
    for k in list(data["runs"]):  # captures read again where the bundle is still there
        v, t, tg = k.split("|")
        b = bundle_for(v, t, tg)
        if b.exists():
            data["captures"][k] = read_captures(b)
    data["picks"] = {v: {"version": p.version, "commit": p.commit, "date": p.date, "why": p.why} for v, p in PICKS.items()}
    data["cells"] = {}
    for k in data["runs"]:
        v, t, tg = k.split("|")
        data["cells"][k] = cell(v, t, tg, data)
    data["expected"] = {f"{t}|{v}": e for (t, v), e in EXPECTED.items()}
    save(json_path, data)
    order = [v for v in PICKS]
    write_section(data, md_path, order, data["tutorials"])
    log(f"wrote {json_path} and {md_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
