"""Parse Triton's own lit tests with irscope and report what it misses (run by hand, not in CI).

Triton's ``test/**/*.mlir`` files are IR written by Triton's developers, not by this
project: a corpus no fixture here was made from. Each file is split on ``// -----``
(the lit ``-split-input-file`` marker) into modules; each module is parsed with
:func:`irscope.ir.parse_as` (as ``ttgir`` when it uses Triton's dialects, else as
``mlir``) and diffed with a second parse of itself by the structural diff engine.

Reported: parser crashes (the parse runs in the strict mode, so a parser bug
raises instead of degrading), mean op coverage (``Module.coverage``, the share of
non-blank, non-comment lines understood: what ``scripts/coverage.py`` and
``tests/test_ir_coverage.py`` measure), the modules below 0.9, the modules where no
function was recognised, and the modules whose self-diff is not empty.

The tests come from a directory of extracted files or straight from a git
directory (a bare clone is enough)::

    .venv/bin/python scripts/lit_coverage.py /tmp/triton/test
    .venv/bin/python scripts/lit_coverage.py --git-dir /path/to/triton.git --commit bceeb9ed7c
    .venv/bin/python scripts/lit_coverage.py /tmp/triton/test --json out/lit.json --show 5
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator

from irscope import text_guard
from irscope.ir import Module, parse_as
from irscope.irdiff.engine import diff_modules
from irscope.irdiff.model import Change

SPLIT_RE = re.compile(r"^// -----.*$", re.M)
"""lit's ``-split-input-file`` marker (a line that starts with ``// -----``)."""
TRITON_DIALECT_RE = re.compile(r"\b(?:tt|ttg|ttng|amdg|amdgpu|triton_gpu|triton_nvidia_gpu|nvg|nvgpu|nvws|proton)\.")
LOW = 0.9


@dataclass
class ModuleResult:
    """One split module of one test file."""

    file: str
    index: int
    """Position of the module in its file (0-based, as split on ``// -----``)."""
    line: int
    """First line of the module in the file."""
    stage: str
    ops: int = 0
    coverage: float = 1.0
    functions: int = 0
    unknown: list[tuple[int, str]] = field(default_factory=list)
    """(line in the file, text) of the first few lines not understood."""
    self_diff: list[str] = field(default_factory=list)
    """The first few changes of the module diffed with itself (empty: as it should be)."""
    crash: str | None = None


def split_modules(text: str) -> Iterator[tuple[int, int, str]]:
    """``(index, first line, text)`` of each module of a lit test file."""
    start, line, index = 0, 1, 0
    for m in SPLIT_RE.finditer(text):
        yield index, line, text[start:m.start()]
        line += text.count("\n", start, m.end()) + 1
        start, index = m.end() + 1, index + 1
    yield index, line, text[start:]


def stage_of(text: str) -> str:
    """``ttgir`` for a module that uses Triton's dialects, ``mlir`` for any other MLIR."""
    return "ttgir" if TRITON_DIALECT_RE.search(text) else "mlir"


def _has_content(text: str) -> bool:
    return any(ln.strip() and not ln.lstrip().startswith("//") for ln in text.split("\n"))


def measure_module(file: str, index: int, line: int, text: str, keep: int = 3) -> ModuleResult:
    """Parse one module twice and diff the two parses (``line``: the module's first
    line in its file; ``keep``: how many unknown lines and changes to keep)."""
    stage = stage_of(text)
    r = ModuleResult(file, index, line, stage)
    try:
        with text_guard.strict():
            a = parse_as(stage, text)
            b = parse_as(stage, text)
            d = diff_modules(a, b, stage)
    except Exception as e:  # noqa: BLE001 - this script's edge: a crash is a finding, recorded per module
        r.crash = f"{type(e).__name__}: {e}"[:300]
        return r
    r.ops = sum(1 for op in a.ops() if op.name != "<unknown>")
    r.coverage = a.coverage
    r.functions = len(a.functions)
    r.unknown = [(line - 1 + n, t.strip()[:160]) for n, t in a.unknown[:keep]]
    r.self_diff = [_change_text(c, line - 1) for c in d.changes[:keep]]
    if len(d.changes) > keep:
        r.self_diff.append(f"... {len(d.changes) - keep} more")
    return r


def _change_text(c: Change, offset: int) -> str:
    """One change in a line: its kind, the file line (``offset``: the module's first line - 1) and text."""
    op = c.after or c.before
    where = f"line {op.line + offset}: " if op is not None else ""
    text = op.text[:120] if op is not None else c.op
    return f"{c.kind} {where}{text}" + (f"  [{'; '.join(c.details)[:200]}]" if c.details else "")


def files_in_dir(root: Path) -> Iterator[tuple[str, str]]:
    """``(relative path, text)`` of every ``*.mlir`` under ``root``."""
    for p in sorted(root.rglob("*.mlir")):
        yield str(p.relative_to(root)), p.read_text(errors="replace")


def files_in_git(git_dir: str, commit: str) -> Iterator[tuple[str, str]]:
    """``(path, text)`` of every ``test/**/*.mlir`` at ``commit`` of a git directory."""
    listing = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", commit, "--", "test"],
                             capture_output=True, text=True, check=True).stdout
    entries = [(ln.split()[2], ln.split("\t", 1)[1]) for ln in listing.splitlines()
               if ln.endswith(".mlir") and " blob " in ln]
    proc = subprocess.Popen(["git", "--git-dir", git_dir, "cat-file", "--batch"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    for sha, path in sorted(entries, key=lambda e: e[1]):
        proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.flush()
        size = int(proc.stdout.readline().split()[2])
        data = proc.stdout.read(size)
        proc.stdout.read(1)
        yield path.removeprefix("test/"), data.decode(errors="replace")
    proc.stdin.close()
    proc.wait()


def summarise(results: list[ModuleResult]) -> dict:
    """The figures of a run."""
    ok = [r for r in results if r.crash is None]
    mean = sum(r.coverage for r in ok) / len(ok) if ok else 1.0
    return {
        "files": len({r.file for r in results}),
        "modules": len(results),
        "crashes": sum(r.crash is not None for r in results),
        "mean_coverage": round(mean, 4),
        "below_0_9": sum(r.coverage < LOW for r in ok),
        "below_1": sum(r.coverage < 1.0 for r in ok),
        "no_function": sum(r.functions == 0 and r.ops > 0 for r in ok),
        "self_diff_nonempty": sum(bool(r.self_diff) for r in ok),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tests", nargs="?", help="directory holding the extracted test/**/*.mlir")
    ap.add_argument("--git-dir", help="read the tests from this git directory instead")
    ap.add_argument("--commit", default="HEAD", help="commit of --git-dir (default HEAD)")
    ap.add_argument("--json", help="write every module's result here")
    ap.add_argument("--show", type=int, default=3, help="examples listed per class")
    a = ap.parse_args()
    if bool(a.tests) == bool(a.git_dir):
        ap.error("give a tests directory or --git-dir")
    files = files_in_git(a.git_dir, a.commit) if a.git_dir else files_in_dir(Path(a.tests))
    t0 = time.perf_counter()
    results = [measure_module(path, i, line, text)
               for path, whole in files for i, line, text in split_modules(whole) if _has_content(text)]
    seconds = time.perf_counter() - t0
    s = summarise(results)
    print(f"{s['files']} files, {s['modules']} modules, {seconds:.1f} s")
    print(f"crashes: {s['crashes']}")
    print(f"mean op coverage: {s['mean_coverage']:.4f} ({s['below_1']} modules below 1.0)")
    print(f"modules below {LOW}: {s['below_0_9']}")
    print(f"modules with ops but no function recognised: {s['no_function']}")
    print(f"modules whose self-diff is not empty: {s['self_diff_nonempty']}")

    def show(title: str, rows: list[ModuleResult], what) -> None:
        if rows and a.show:
            print(f"\n{title}:")
            for r in rows[:a.show]:
                print(f"  {r.file}#{r.index} (line {r.line}): {what(r)}")

    show("crashes", [r for r in results if r.crash], lambda r: r.crash)
    show(f"below {LOW}", sorted((r for r in results if r.crash is None and r.coverage < LOW),
                               key=lambda r: r.coverage), lambda r: f"{r.coverage:.3f} {r.unknown[:2]}")
    show("no function", [r for r in results if r.crash is None and r.functions == 0 and r.ops > 0],
         lambda r: r.unknown[:1] or f"{r.ops} ops")
    show("self-diff", [r for r in results if r.self_diff], lambda r: r.self_diff[:2])
    if a.json:
        Path(a.json).write_text(json.dumps({"summary": s, "seconds": round(seconds, 1),
                                            "modules": [asdict(r) for r in results]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
