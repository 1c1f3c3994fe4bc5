"""Run a script under Proton's PC sampling (``irscope run --profile`` without ``ncu``).

    python irscope_proton.py OUT_STEM INFO_JSON script.py [args...]

Writes OUT_STEM.hatchet (Proton's per-line samples, with stall reasons, of every
kernel the script launches) and INFO_JSON (the GPU's name, Triton's version). Runs in
the user's interpreter, so it imports nothing of irscope.
"""

from __future__ import annotations

import json
import os
import runpy
import sys


def main(argv: list[str]) -> int:
    """Start Proton's PC sampling, run the script as ``__main__``, finalize."""
    if len(argv) < 3:
        print("usage: irscope_proton.py OUT_STEM INFO_JSON script.py [args...]", file=sys.stderr)
        return 2
    stem, info_path, script = argv[0], argv[1], argv[2]
    import triton
    import triton.profiler as proton

    info: dict[str, str | None] = {"triton": triton.__version__, "gpu": None}
    try:
        import torch

        info["gpu"] = torch.cuda.get_device_name() if torch.cuda.is_available() else None
    except ImportError:  # a Triton script without torch: the GPU stays unnamed
        pass
    with open(info_path, "w") as f:
        json.dump(info, f)
    proton.start(stem, backend="cupti", mode="pcsampling")
    # The script runs as if started directly: its argv, its folder first on sys.path.
    sys.argv = [script, *argv[3:]]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        proton.finalize()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
