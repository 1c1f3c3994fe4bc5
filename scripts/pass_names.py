"""Record every compiler pass name the sample kernels go through, per Triton version.

    .venv/bin/python scripts/pass_names.py                    # capture 3.2, 3.6, 3.9 (sm_90)
    .venv/bin/python scripts/pass_names.py --versions 3.6 --target sm_80
    .venv/bin/python scripts/pass_names.py --from-bundle 3.6=out/coverage/triton-3.6.irscope

For each version, every script in ``sample_kernels/`` is captured compile-only with
``irscope run --python .venvs/triton-X.Y/bin/python`` (``.venv`` itself for 3.6, the
Triton it holds) into one scratch bundle, and the names of all pass snapshots of all
captures are written sorted, one a line, to ``tests/data/pass_names/X.Y.txt``. Each
line is ``kind<TAB>name<TAB>argument`` (``kind`` is ``mlir``, ``llvm`` or ``mir``;
``argument`` is the pass's command-line name, empty when the dump prints none, as
for Triton's internal pipeliner dumps). ``tests/test_pass_catalog.py`` checks that
the pass catalog describes every one of them.

Pass ``--llvm-passes`` to also record LLVM's passes (the default capture has MLIR
passes only). Takes a few minutes per version on two cores.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from irscope.core import open_bundle  # noqa: E402

DEFAULT_VERSIONS = ("3.2", "3.6", "3.9")
OUT_DIR = ROOT / "tests" / "data" / "pass_names"


def interpreter(version: str) -> Path:
    """The Python of the venv holding Triton ``version`` (3.6 lives in ``.venv``)."""
    venv = ROOT / ".venvs" / f"triton-{version}"
    if not venv.exists() and version == "3.6":
        venv = ROOT / ".venv"
    return venv / "bin" / "python"


def capture(version: str, bundle: Path, target: str, llvm: bool) -> None:
    """Capture every sample script under Triton ``version`` into ``bundle``."""
    irscope = ROOT / ".venv" / "bin" / "irscope"
    for script in sorted((ROOT / "sample_kernels").glob("*.py")):
        cmd = [str(irscope), "run", str(script), "--python", str(interpreter(version)),
               "-o", str(bundle), "--target", target, "-q", "--no-open"]
        if llvm:
            cmd.append("--llvm-passes")
        print(f"[{version}] {script.name}", file=sys.stderr, flush=True)
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            # a script that fails under an old Triton still leaves its other kernels
            print(f"  exit {done.returncode}: {done.stderr.strip()[-300:]}", file=sys.stderr)


def pass_names(bundle: Path) -> list[str]:
    """Sorted ``kind\\tname\\targument`` lines of every pass snapshot in ``bundle``."""
    seen: set[tuple[str, str, str]] = set()
    with open_bundle(str(bundle)) as b:
        for cap in b.captures():
            for p in cap.passes():
                seen.add((p.kind, p.name, p.argument))
    return ["\t".join(t) for t in sorted(seen)]


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--versions", default=",".join(DEFAULT_VERSIONS),
                    help="comma-separated Triton minor versions (default: 3.2,3.6,3.9)")
    ap.add_argument("--target", default="sm_90", help="compile-only target (default sm_90)")
    ap.add_argument("--llvm-passes", action="store_true", help="also record LLVM passes")
    ap.add_argument("--from-bundle", action="append", default=[], metavar="VER=PATH",
                    help="read VER's names from an existing bundle instead of capturing")
    ap.add_argument("--keep", action="store_true", help="keep the scratch bundles (in /tmp)")
    args = ap.parse_args()
    given = dict(item.split("=", 1) for item in args.from_bundle)
    versions = [v.strip() for v in args.versions.split(",") if v.strip()] + \
        [v for v in given if v not in args.versions.split(",")]
    for version in versions:
        if version in given:
            bundle = Path(given[version])
        else:
            bundle = Path(tempfile.gettempdir()) / f"pass_names_{version}.irscope"
            bundle.unlink(missing_ok=True)
            capture(version, bundle, args.target, args.llvm_passes)
        names = pass_names(bundle)
        write_atomic(OUT_DIR / f"{version}.txt", "".join(n + "\n" for n in names))
        print(f"{version}: {len(names)} distinct passes -> {OUT_DIR / (version + '.txt')}")
        if version not in given and not args.keep:
            bundle.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
