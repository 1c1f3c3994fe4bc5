"""Run a Python script under Proton's PC sampling (GPU machine only).

    python scripts/proton_pcsample.py OUT_STEM script.py [args...]

writes OUT_STEM.hatchet: Proton's per-line samples, with stall reasons, of every
kernel the script launches.
"""

from __future__ import annotations

import runpy
import sys


def main(argv: list[str]) -> int:
    """Start Proton's PC sampling, run the script as ``__main__``, finalize."""
    if len(argv) < 2:
        print("usage: proton_pcsample.py OUT_STEM script.py [args...]", file=sys.stderr)
        return 2
    import triton.profiler as proton

    stem, script = argv[0], argv[1]
    proton.start(stem, backend="cupti", mode="pcsampling")
    sys.argv = [script, *argv[2:]]
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        proton.finalize()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
