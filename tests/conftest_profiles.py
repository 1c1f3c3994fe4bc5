"""The shared fixture of the profile tests: real H200 captures with real profiles attached.

tests/data/profiles/<name>/ holds, for six sample kernels, the capture made on an H200
(``gpu.irscope``), Nsight Compute's source export of the same script's first launches
(``sass.csv``) and Proton's PC sampling of it (``proton.hatchet``); see
tests/data/README.md and scripts/gpu_profiles.sh. The fixture copies a capture to a
temporary folder and attaches its profiles with the real command, ``irscope profile
import``, once per session, so every test reads bundles made the way a user makes them.

    def test_x(profiled):
        pb = profiled.ncu("fused_softmax")      # a bundle with the ncu profile attached
        cap = irscope.open(pb.path).capture(pb.kernel)

``profiled.ncu(name)``: ``sass.csv`` imported by kernel name, which gives one Nsight Compute
profile to each capture that ``CAPTURES`` names (flash_attention: both variants, STAGE=1 and
STAGE=3, each from its own launch; matmul_autotune: the 128x256x64 config, the one both
profiled launches ran).
``profiled.proton(name)``: Proton's profile of the kernel name on its first capture
(Proton merges every launch and variant of one kernel name).
Bundles are made on first use and shared by the session: tests read them, never write
them (copy one to tmp_path to change it).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PROFILES = Path(__file__).resolve().parent / "data" / "profiles"
SAMPLES = Path(__file__).resolve().parent.parent / "sample_kernels"

# The sample scripts profiled (tests/data/profiles/<name>/), and their kernel.
KERNELS = {
    "vector_add": "add_kernel",
    "fused_softmax": "softmax_kernel",
    "jit_helper_call": "bias_gelu_rowsum_kernel",
    "layer_norm": "_layer_norm_fwd_fused",
    "flash_attention": "_attn_fwd",
    "matmul_autotune": "matmul_kernel",
}
# The captures (ids in gpu.irscope) that sass.csv holds launches of: the SASS check
# refuses the others (matmul's other three configs were never among ncu's launches).
CAPTURES = {name: (1,) for name in KERNELS} | {"flash_attention": (1, 2)}


def _env_stamps() -> dict[str, str]:
    """GPU, ncu version and date of the profiling run, from tests/data/profiles/env.txt
    (sass.csv names none of them)."""
    lines = (PROFILES / "env.txt").read_text().splitlines()
    gpu = next(ln.split(" ", 1)[1] for ln in lines if ln.startswith("gpu "))
    version = next(ln.split(" ", 1)[1] for ln in lines if ln.startswith("Version "))
    date = next(ln for ln in lines if ln[:4].isdigit() and "T" in ln)
    triton = next(ln.split(" ", 1)[1] for ln in lines if ln.startswith("triton "))
    return {"gpu": gpu, "ncu": version.split(" (")[0], "date": date, "triton": triton}


@dataclass(frozen=True)
class ProfiledBundle:
    """A copy of one H200 capture with one tool's profile(s) attached."""

    name: str  # the sample script (tests/data/profiles/<name>/)
    tool: str  # "ncu" | "proton"
    path: Path  # the bundle
    kernel: str
    captures: tuple[int, ...]  # capture ids that got a profile
    profile_ids: tuple[int, ...]  # the attachments, in the order of ``captures``
    sass_csv: Path  # the checked-in export (ncu's own per-instruction view)
    hatchet: Path  # the checked-in Proton tree
    script: Path  # sample_kernels/<name>.py (this machine's copy of the file profiled)


def _cli(*args: object) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, "-m", "irscope", *map(str, args)], capture_output=True, text=True,
                       timeout=300)
    if p.returncode != 0:
        raise AssertionError(f"irscope {' '.join(map(str, args))} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


class ProfiledBundles:
    """Makes the profiled bundles on first use; one per (sample, tool) per session."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.stamps = _env_stamps()
        self._made: dict[tuple[str, str], ProfiledBundle] = {}

    names = tuple(KERNELS)

    def ncu(self, name: str) -> ProfiledBundle:
        """The capture with Nsight Compute's profile attached to each of ``CAPTURES[name]``."""
        return self._get(name, "ncu")

    def proton(self, name: str) -> ProfiledBundle:
        """The capture with Proton's profile attached to its first capture."""
        return self._get(name, "proton")

    def _get(self, name: str, tool: str) -> ProfiledBundle:
        key = (name, tool)
        if key not in self._made:
            self._made[key] = self._make(name, tool)
        return self._made[key]

    def _make(self, name: str, tool: str) -> ProfiledBundle:
        src = PROFILES / name
        path = self.root / f"{name}.{tool}.irscope"
        shutil.copy(src / "gpu.irscope", path)
        s = self.stamps
        if tool == "ncu":
            file, captures = src / "sass.csv", CAPTURES[name]
            stamp = ["--gpu", s["gpu"], "--tool-version", s["ncu"], "--date", s["date"]]
        else:
            file, captures = src / "proton.hatchet", (1,)
            stamp = ["--gpu", s["gpu"], "--tool-version", s["triton"], "--date", s["date"]]
        # By kernel name, as a user imports: each variant gets the launches that ran its code.
        _cli("profile", "import", path, KERNELS[name], file, *stamp)
        listed = json.loads(_cli("profile", "ls", path, "--json").stdout)
        got = tuple(int(p["capture_id"]) for p in listed)
        if got != captures:
            raise AssertionError(f"{path}: profiles on captures {got}, expected {captures}: {listed}")
        ids = tuple(int(p["id"]) for p in listed)
        return ProfiledBundle(name, tool, path, KERNELS[name], captures, ids, src / "sass.csv",
                              src / "proton.hatchet", SAMPLES / f"{name}.py")


@pytest.fixture(scope="session")
def profiled(tmp_path_factory: pytest.TempPathFactory) -> ProfiledBundles:
    """Real H200 captures with their real profiles attached (see the module's docstring)."""
    return ProfiledBundles(tmp_path_factory.mktemp("profiled"))
