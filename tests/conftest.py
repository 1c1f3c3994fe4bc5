"""Shared helpers: run the real CLI in a subprocess, capture real kernels once."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run, so a red suite is a regression,
# never a lucky draw; IRSCOPE_HYPOTHESIS=hunt draws new ones (how the fixes of the
# garbled-text properties were found).
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("hunt", derandomize=False)
settings.load_profile(os.environ.get("IRSCOPE_HYPOTHESIS", "repeatable"))

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_kernels"
DATA = Path(__file__).resolve().parent / "data"
VENVS = ROOT / ".venvs"


def irscope(*args, check=False, timeout=600, env=None, cwd=None):
    """Run ``python -m irscope ARGS``; returns the CompletedProcess (text)."""
    # os.environ, not the C-level environment: a pytest plugin sets COLUMNS there
    # (os.putenv), which would narrow every table the commands print.
    if env is None:
        # Under pytest-xdist the workers inherit that C-level COLUMNS=80 in os.environ;
        # a command's width is the test's business (tests that want 80 say so).
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    p = subprocess.run([sys.executable, "-m", "irscope", *map(str, args)], capture_output=True, text=True,
                       timeout=timeout, env=env, cwd=cwd)
    if check and p.returncode != 0:
        raise AssertionError(f"irscope {' '.join(map(str, args))} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


def ls_json(bundle):
    """``irscope ls BUNDLE --json`` as Python objects."""
    return json.loads(irscope("ls", bundle, "--json", check=True).stdout)


@pytest.fixture(scope="session")
def sample_bundle(tmp_path_factory):
    """vector_add, matmul (autotune) and the helper-call kernel, captured with no GPU."""
    path = tmp_path_factory.mktemp("samples") / "samples.irscope"
    # One process for the three (each `irscope run` starts torch and Triton: seconds).
    irscope("run", ROOT / "scripts" / "run_samples.py", "-o", path, "-q", "--",
            "vector_add", "matmul_autotune", "jit_helper_call", check=True)
    return path


def write_script(tmp_path, name, body):
    """A small kernel script in tmp_path."""
    p = tmp_path / name
    p.write_text(body)
    return p


VECTOR_ADD = '''
import torch, triton, triton.language as tl
DEVICE = triton.runtime.driver.active.get_active_torch_device()

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)
'''


# The profile tests' shared fixture (real H200 captures with real profiles attached).
from conftest_profiles import ProfiledBundle, ProfiledBundles, profiled  # noqa: E402,F401

# The sample kernels under three Tritons, captured once per session for every worker.
from conftest_shared import samples_by_version, version_samples  # noqa: E402,F401

# Long test files start first (scripts/test.sh keeps this order under xdist).
from conftest_order import pytest_collection_modifyitems  # noqa: E402,F401
