"""Parse speed and memory of irscope.ir.

    python benchmarks/bench_parse.py                     # the fixtures in tests/data/ir
    python benchmarks/bench_parse.py /tmp/matmul_passes.txt /tmp/k.ptx   # plus these

A file holding pass-dump headers is split (both MLIR and LLVM families) and every
snapshot parsed; other files are parsed as the stage their extension names. Each
group is timed 5 times (median, a fresh ParseCache each run, split included, results
kept alive until the run ends). Memory is measured twice: the peak of Python
allocations during the parse (tracemalloc, input text excluded) and, in a fresh
child process that parses once, the process peak RSS (interpreter and input text
included) next to the RSS before parsing.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from irscope.compiler.stages import for_extension  # noqa: E402
from irscope.ir import ParseCache, parse_snapshots, parse_stage, split_pass_dump  # noqa: E402
from procmem import reset_peak, status_mb  # noqa: E402  (a sibling module in benchmarks/)

FIXTURES = ROOT / "tests" / "data" / "ir"
_DUMP_MARKERS = ("// -----// IR Dump", "*** IR Dump")


def _is_dump(text: str) -> bool:
    head = text[:1_000_000]
    return any(m in head for m in _DUMP_MARKERS)


def _job(items: list[tuple[str, str]]) -> list:
    """Parse every (kind, text) item with one shared cache; return the results."""
    cache = ParseCache()
    out = []
    for kind, text in items:
        if kind == "dump":
            out.append(parse_snapshots(split_pass_dump(text), cache))
        else:
            out.append(parse_stage(kind, text, cache))
    return out


def _load(paths: list[Path]) -> list[tuple[str, str]]:
    items = []
    for path in paths:
        text = path.read_text(errors="replace")
        if _is_dump(text):
            items.append(("dump", text))
            continue
        info = for_extension(path.suffix)
        if info is not None:
            items.append((info.name, text))
    return items






def _peak_mb() -> float:
    hwm = status_mb("VmHWM")
    return hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child_rss(paths: list[Path]) -> tuple[float, float]:
    """(RSS before, peak RSS during) one parse of ``paths`` in a fresh process, MB."""
    out = subprocess.run([sys.executable, __file__, "--rss-child", *map(str, paths)],
                         check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1])


def bench(name: str, paths: list[Path], runs: int) -> None:
    """Time and measure one group of inputs and print a line about it."""
    items = _load(paths)
    size = sum(len(t.encode()) for _, t in items)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        result = _job(items)
        times.append(time.perf_counter() - t0)
        del result
    tracemalloc.start()
    result = _job(items)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del result
    med = statistics.median(times)
    before, after = _child_rss(paths)
    print(f"{name:<28} {size / 1e6:7.2f} MB {med * 1000:8.1f} ms {size / med / 1e6:6.1f} MB/s"
          f" (best {size / min(times) / 1e6:5.1f})  alloc peak {peak / 1e6:6.1f} MB"
          f"  RSS {before:4.0f} -> {after:4.0f} MB")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="extra files (big dumps...)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rss-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rss_child:  # internal: one parse in a fresh process, report peak RSS
        items = _load(args.paths)
        reset_peak()
        before = status_mb("VmRSS") or _peak_mb()
        result = _job(items)
        print(before, _peak_mb())
        del result
        return 0

    stages = sorted(p for p in FIXTURES.glob("*/*/*")
                    if p.suffix in (".ttir", ".ttgir", ".llir", ".ptx", ".sass"))
    dumps = sorted(FIXTURES.glob("*/*/*_passes.txt"))
    print(f"{'input':<28} {'size':>10} {'median':>11} {'speed (median)':>24}")
    bench(f"fixture stages ({len(stages)})", stages, args.runs)
    bench(f"fixture pass dumps ({len(dumps)})", dumps, args.runs)
    if args.paths:
        bench("+".join(p.name for p in args.paths)[:28], args.paths, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
