"""Instructions executed by the TTGIR parse and by the model on top of it: a
deterministic A/B figure for a noisy machine (docs/benchmarks.md, the IR model).

    python benchmarks/count_model_instructions.py [--bundle out/samples.irscope] [--json FILE]

The text is the one ``bench_model.py`` picks (the bundle's largest TTGIR). Three
runs under ``valgrind --tool=cachegrind`` count every instruction of one process:
imports only; imports + parse; imports + parse + model (def-use, every op's types,
every encoding: what ``bench_model.py`` times). Each uses ``PYTHONHASHSEED=0`` and
settles the cyclic collector as ``bench_model.py`` does. The parse is the second
count minus the first; the model is the third minus the second. Needs valgrind
(Debian's ``valgrind`` package); it takes about half a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))  # bench_model: the text it picks, the model it builds


def one(path: str, upto: int) -> None:
    """The measured process: ``upto`` 0 imports, 1 parses too, 2 builds the model too."""
    import gc

    from bench_model import build_model, load_model_modules

    load_model_modules()
    from irscope.ir import parse_stage
    import irscope.ir.types  # noqa: F401 - build_model's import, before any count

    text = Path(path).read_text()
    gc.collect()
    if upto >= 1:
        mod = parse_stage("ttgir", text)
        gc.collect(1)
    if upto >= 2:
        build_model(mod)
        gc.collect(1)


def count(path: str, upto: int) -> int:
    env = dict(os.environ, PYTHONHASHSEED="0")
    out = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                          sys.executable, __file__, "--one", path, str(upto)],
                         capture_output=True, text=True, env=env, check=True).stderr
    m = re.search(r"I\s+refs:\s+([\d,]+)", out)
    if m is None:
        raise SystemExit("count_model_instructions: valgrind printed no instruction count")
    return int(m.group(1).replace(",", ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", default=str(ROOT / "out" / "samples.irscope"))
    ap.add_argument("--json")
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        one(args.one[0], int(args.one[1]))
        return 0
    if shutil.which("valgrind") is None:
        print("count_model_instructions: valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 1
    from bench_model import pick_texts

    label, text = pick_texts(args.bundle)["ttgir"]
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "ttgir.txt")
        Path(path).write_text(text)
        base, parsed, modelled = (count(path, k) for k in (0, 1, 2))
    parse, model = parsed - base, modelled - parsed
    doc = {"text": label, "parse_instructions": parse, "model_instructions": model,
           "ratio_model_over_parse": round(model / parse, 3), "python": sys.version.split()[0]}
    print(f"{label}: parse {parse / 1e6:.1f}M instructions, model {model / 1e6:.1f}M = "
          f"{doc['ratio_model_over_parse']}x the parse")
    if args.json:
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
