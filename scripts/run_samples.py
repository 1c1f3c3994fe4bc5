"""Run every sample kernel script in one process, each as ``__main__``.

    irscope run scripts/run_samples.py -o samples.irscope [--target ...] [-- NAME ...]

One interpreter start instead of eight; a sample that fails (in compile-only mode
every numeric check does, there being no results) is reported in one line and the
next one runs. Optional arguments name the samples to run (without ``.py``).
"""

import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(os.path.dirname(HERE), "sample_kernels")


def main(names):
    scripts = sorted(f for f in os.listdir(SAMPLES) if f.endswith(".py"))
    if names:
        scripts = [f"{n}.py" for n in names]
    for script in scripts:
        path = os.path.join(SAMPLES, script)
        try:
            runpy.run_path(path, run_name="__main__")
        except BaseException as exc:  # keep going: the next sample still compiles
            if isinstance(exc, KeyboardInterrupt):
                raise
            print(f"{script}: {type(exc).__name__}: {str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ''}")


if __name__ == "__main__":
    main(sys.argv[1:])
