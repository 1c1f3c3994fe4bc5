"""``irscope layout``: how long a picture takes, by shape and mode, against the JSON map alone.

    python benchmarks/bench_layout.py [--runs 3]

For each case (an encoding and a shape, full or compact cells), median of the runs:

* ``map``: decode + element -> owners map + the ``--format json`` text (the baseline:
  what the command costs with no picture at all);
* ``dot``: building the DOT text of the PNG (HTML-like table, one cell per element);
* ``svg``: the whole SVG (the DOT text with an empty cell for the grid, the real
  ``dot`` binary, and the grid written into its SVG);
* ``png``: the whole PNG (the DOT text and ``dot`` drawing every cell);

with the output sizes and the ratio of ``map + svg`` to ``map``.  It
answers whether Graphviz is fast enough to lay every element out as a table cell
and where compact mode must start.  (In SVG, dot lays out the frame and
:mod:`irscope.export.layout_svg` writes the cells; PNG is dot's table.)

``--sizes``: the SVG sizes only, for the size goal: the 64x64 blocked and
nvmma_shared pictures (text in every cell; goal < 500 KB) and the largest tensor layout of the captures
in ``tests/data`` (as ``irscope layout BUNDLE KERNEL --op-line N`` draws it).
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
    ap.add_argument("--sizes", action="store_true", help="only the SVG sizes of the size goal")
    args = ap.parse_args()
    if args.sizes:
        return sizes()
    print(f"# {platform.node()} {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}, Python {platform.python_version()}, median of {args.runs}")
    print("| layout | shape | cells | map + JSON | DOT text (PNG) | SVG, whole | PNG, whole | SVG | PNG | "
          "(map + SVG) / map |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, enc, shape, compact in CASES:
        t_map, pic = _time(_map, args.runs, enc, shape)
        t_dot, _ = _time(layout_dot, args.runs, [pic], compact=compact)
        t_svg, svg = _time(render_layout, args.runs, [pic], "svg", compact=compact)
        t_png, png = _time(render_layout, args.runs, [pic], "png", compact=compact)
        total = t_map + t_svg
        print(f"| {name} | {'x'.join(map(str, shape))} | {'compact' if compact else 'text'} | {t_map:.3f} s | "
              f"{t_dot:.3f} s | {t_svg:.3f} s | {t_png:.3f} s | {len(svg) / 1e6:.2f} MB | {len(png) / 1e6:.2f} MB | "
              f"{total / t_map:.1f}x |")
    return 0


def sizes() -> int:
    """The size goal's figures: 64x64 blocked, and the largest layout in tests/data."""
    import irscope
    from irscope.export.layout_op import module_layouts, op_layouts

    svg = render_layout([picture_of(BLOCKED, [64, 64])], "svg")
    print(f"| blocked 64x64, text in every cell | {len(svg) / 1000:.0f} KB |")
    svg = render_layout([picture_of(NVMMA, [64, 64])], "svg")
    print(f"| nvmma_shared 64x64, bank and offset in every cell | {len(svg) / 1000:.0f} KB |")
    best = None
    for path in sorted((Path(__file__).resolve().parent.parent / "tests" / "data").glob("*.irscope")):
        with irscope.open(str(path)) as b:
            for cap in b.captures():
                if "ttgir" not in cap.stages:
                    continue
                module = cap.stage("ttgir").module
                for side in module_layouts(module, max_elements=65536):
                    if best is None or side.picture.numel > best[0]:
                        best = (side.picture.numel, path.name, cap.id, int(side.role.split()[1]), module)
    if best is not None:
        numel, name, cid, line, module = best
        found = op_layouts(module, line)
        sources = sum(s.role.startswith("operand") for s in found.sides)
        svg = render_layout(found.pictures, "svg", op_name=found.op_name, sources=sources)
        shapes = ", ".join("x".join(map(str, p.shape)) for p in found.pictures)
        print(f"| largest in tests/data: {name} #{cid} --op-line {line} ({found.op_name}, {shapes}; compact) | "
              f"{len(svg) / 1000:.0f} KB |")
    return 0


def _map(enc, shape):
    pic = picture_of(enc, shape)
    json.dumps(pic.to_json())
    return pic


if __name__ == "__main__":
    raise SystemExit(main())
