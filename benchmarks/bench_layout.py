"""``irscope layout``: how long a picture takes, by shape and mode, against the JSON map alone.

    python benchmarks/bench_layout.py [--runs 3]

For each case (an encoding and a shape, full or compact cells), median of the runs:

* ``map``: decode + element -> owners map + the ``--format json`` text (the baseline:
  what the command costs with no picture at all);
* ``dot``: building the DOT text (HTML-like table, one cell per element);
* ``svg`` / ``png``: the real ``dot`` binary drawing it (``graphviz`` package pipe);

with the output sizes and the ratio of ``map + dot + svg`` to ``map``.  It
answers whether Graphviz is fast enough to draw every element as a table cell
(instead of writing the SVG by hand) and where compact mode must start.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from irscope.export.layout_dot import layout_dot, render_layout
from irscope.export.layout_picture import picture_of

BLOCKED = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
MMA3 = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 128, 16]}>"
NVMMA = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"
CASES = [
    ("blocked", BLOCKED, [16, 16], False), ("blocked", BLOCKED, [64, 64], False),
    ("mma v3", MMA3, [128, 128], False), ("mma v3", MMA3, [128, 128], True),
    ("mma v3", MMA3, [256, 128], True), ("blocked", BLOCKED, [256, 256], True),
    ("nvmma_shared", NVMMA, [64, 64], False), ("nvmma_shared", NVMMA, [128, 128], True),
]


def _time(fn, runs, *args, **kwargs):
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn(*args, **kwargs)
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print(f"# {platform.node()} {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}, Python {platform.python_version()}, median of {args.runs}")
    print("| layout | shape | cells | map + JSON | DOT text | dot -Tsvg | dot -Tpng | SVG | PNG | total / map |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, enc, shape, compact in CASES:
        t_map, pic = _time(_map, args.runs, enc, shape)
        t_dot, _ = _time(layout_dot, args.runs, [pic], compact=compact)
        t_svg, svg = _time(render_layout, args.runs, [pic], "svg", compact=compact)
        t_png, png = _time(render_layout, args.runs, [pic], "png", compact=compact)
        t_svg -= t_dot  # render_layout builds the DOT text too
        t_png -= t_dot
        total = t_map + t_dot + t_svg
        print(f"| {name} | {'x'.join(map(str, shape))} | {'compact' if compact else 'text'} | {t_map:.3f} s | "
              f"{t_dot:.3f} s | {t_svg:.3f} s | {t_png:.3f} s | {len(svg) / 1e6:.2f} MB | {len(png) / 1e6:.2f} MB | "
              f"{total / t_map:.1f}x |")
    return 0


def _map(enc, shape):
    pic = picture_of(enc, shape)
    json.dumps(pic.to_json())
    return pic


if __name__ == "__main__":
    raise SystemExit(main())
