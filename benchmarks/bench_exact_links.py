"""Speed of the exact-link alignment (:func:`irscope.link.exact.align_ttgirloc`), which
pairs a normal stage's instructions with those of its ``--exact-links`` twin through the
structural IR diff, next to :class:`difflib.SequenceMatcher` over the same instruction
texts (the standard library's sequence alignment, kept here as the reference).

    python benchmarks/bench_exact_links.py            # tests/data/vector_add_exact.irscope, out/samples.irscope
    python benchmarks/bench_exact_links.py A.irscope B.irscope --runs 5

Each capture's ``llir`` and ``ptx`` are aligned with a twin:

- ``twin``: the capture's own ``llir_ttgirloc`` / ``ptx_ttgirloc`` (an ``--exact-links``
  capture). When the two are identical once debug references are stripped, the
  alignment is a plain zip; both columns then time the alignment as if they were
  not, so the figures compare the aligners.
- for a capture without one, twins made from its own text, so that the
  identical-text shortcut never applies: ``drop``, the LLVM debug references
  renumbered (as the second compile's debug table renumbers them) and every 97th
  instruction line dropped (a divergence, as a location-sensitive optimisation
  makes); ``renum``, the same with every numbered value renamed as well (``%12`` ->
  ``%13``, ``%r5`` -> ``%r6``: what one more or one fewer value early in the function
  does to the rest), where texts compared with their names agree on almost nothing.

Columns: instructions on each side, median seconds of ``--runs`` runs for each aligner
(normalising the texts included), and for each the pairs it finds and how many of
them are right (a made twin knows where each line went; a real one is taken as
pairing in order, which holds when it is identical).
"""

from __future__ import annotations

import argparse
import difflib
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import irscope  # noqa: E402
from irscope.ir import Module, parse_stage  # noqa: E402
from irscope.link.exact import align_ttgirloc, normalise_instruction, pair_instructions  # noqa: E402

DEFAULT = [ROOT / "tests" / "data" / "vector_add_exact.irscope", ROOT / "out" / "samples.irscope"]
_DBG = re.compile(r"!dbg !(\d+)")
_NUMBERED = re.compile(r"%([a-z]*)(\d+)\b")


def difflib_pairs(normal: Module, twin: Module) -> dict[int, int]:
    """normal line -> twin line of the instructions in :class:`difflib.SequenceMatcher`'s
    matching blocks over the normalised instruction texts (the reference aligner)."""
    a, b = list(normal.ops()), list(twin.ops())
    sm = difflib.SequenceMatcher(None, [normalise_instruction(o.text) for o in a],
                                 [normalise_instruction(o.text) for o in b], autojunk=False)
    return {a[blk.a + k].line: b[blk.b + k].line for blk in sm.get_matching_blocks() for k in range(blk.size)}


def engine_pairs(normal: Module, twin: Module) -> dict[int, int]:
    """:func:`align_ttgirloc`'s pairs when the texts differ (:func:`pair_instructions`)."""
    return pair_instructions(normal, twin)


def made_twin(stage: str, module: Module, text: str, renumber: bool) -> tuple[Module, dict[int, int]]:
    """A twin of ``text`` (debug references renumbered, every 97th instruction dropped;
    ``renumber``: every numbered value renamed too) and the true pairs: each kept
    line -> its line in the twin."""
    drop = {op.line for i, op in enumerate(module.ops()) if i % 97 == 96 and op.line == op.end_line}
    lines = text.split("\n")
    kept = [n for n in range(1, len(lines) + 1) if n not in drop]
    twin = "\n".join(lines[n - 1] for n in kept)
    twin = _DBG.sub(lambda m: f"!dbg !{int(m.group(1)) + 1000}", twin)
    if renumber:
        twin = _NUMBERED.sub(lambda m: f"%{m.group(1)}{int(m.group(2)) + 1}", twin)
    return parse_stage(stage, twin), {n: k for k, n in enumerate(kept, 1)}


def _right(pairs: dict[int, int], truth: dict[int, int]) -> str:
    """``right/pairs``: how many of the pairs are the true ones."""
    return f"{sum(1 for a, b in pairs.items() if truth.get(a) == b)}/{len(pairs)}"


def median_seconds(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundles", nargs="*", type=Path, help="bundles (default: the two named above)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--made", default="drop,renum", type=lambda s: s.split(","),
                    help="twins made for captures without one (drop, renum)")
    args = ap.parse_args(argv)
    print(f"{'capture':34} {'stage':5} {'twin':5} {'instr':>11} {'difflib s':>10} {'engine s':>9} "
          f"{'difflib right/pairs':>22} {'engine right/pairs':>22}")
    for path in args.bundles or DEFAULT:
        if not path.exists():
            print(f"{path}: missing, skipped")
            continue
        with irscope.open(str(path)) as bundle:
            for cap in bundle.captures():
                for stage in ("llir", "ptx"):
                    if stage not in cap.stages:
                        continue
                    normal = cap.stage(stage).module
                    if f"{stage}_ttgirloc" in cap.stages:
                        twin = cap.stage(f"{stage}_ttgirloc").module
                        assert align_ttgirloc(normal, twin)[0]  # the production path runs
                        twins = [("twin", twin, {x.line: y.line for x, y in zip(normal.ops(), twin.ops())})]
                    else:
                        text = cap.stage(stage).text
                        twins = [(how, *made_twin(stage, normal, text, how == "renum")) for how in args.made]
                    for how, twin, truth in twins:
                        old = median_seconds(lambda: difflib_pairs(normal, twin), args.runs)
                        new = median_seconds(lambda: engine_pairs(normal, twin), args.runs)
                        right = [_right(pairs, truth) for pairs in (difflib_pairs(normal, twin),
                                                                    engine_pairs(normal, twin))]
                        sizes = f"{sum(1 for _ in normal.ops())}/{sum(1 for _ in twin.ops())}"
                        name = f"{path.name}#{cap.id} {cap.kernel}"[:34]
                        print(f"{name:34} {stage:5} {how:5} {sizes:>11} {old:10.4f} {new:9.4f} "
                              f"{right[0]:>22} {right[1]:>22}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
