"""Capture with other Triton versions through `--python` (venvs made by scripts/setup.sh).

The capture side runs inside those interpreters, where irscope and its
dependencies are not installed: only the stdlib hook is put on their path.
"""

import pytest

from conftest import SAMPLES, VENVS, irscope, ls_json

pytestmark = pytest.mark.slow

VERSIONS = {"3.2": "3.2.0", "3.9": "3.9.0"}


def _python(version):
    exe = VENVS / f"triton-{version}" / "bin" / "python"
    assert exe.exists(), f"{exe} missing: run scripts/setup.sh"
    return exe


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_run_under_other_triton(tmp_path, version):
    out = tmp_path / "v.irscope"
    irscope("run", SAMPLES / "jit_helper_call.py", "--python", _python(version), "--target", "sm_80", "--target", "sm_90",
            "-o", out, "-q", check=True)
    caps = ls_json(out)
    assert {c["triton_version"] for c in caps} == {VERSIONS[version]}
    assert {c["target"] for c in caps} == {"sm_80", "sm_90"}
    for c in caps:
        assert {"ttir", "ttgir", "llir", "ptx", "cubin", "sass"} <= set(c["stages"])
        assert c["passes"] > 40 and c["registers"]
    from irscope.store.bundle import Bundle

    with Bundle.open(str(out)) as b:
        passes = b.passes(caps[0]["id"])
    # the pass header changed format at 3.8; names and arguments parse either way
    args = {p.argument for p in passes}
    assert "tritongpu-coalesce" in args and "inline" in args
    assert all(p.name and " " not in p.name for p in passes if p.when == "before")


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_compile_under_other_triton(tmp_path, version):
    out = tmp_path / "c.irscope"
    irscope("compile", f"{SAMPLES / 'vector_add.py'}::add_kernel", "--python", _python(version),
            "--signature", "*fp32,*fp32,*fp32,i32:16", "--constexpr", "BLOCK_SIZE=1024", "--num-warps", "4",
            "-o", out, check=True)
    (c,) = ls_json(out)
    assert c["triton_version"] == VERSIONS[version] and c["variant"].startswith("BLOCK_SIZE=1024")


def test_versions_side_by_side(tmp_path):
    out = tmp_path / "both.irscope"
    for version in ("3.2", None, "3.9"):
        extra = ["--python", _python(version)] if version else []
        irscope("run", SAMPLES / "vector_add.py", *extra, "-o", out, "-q", check=True)
    versions = [c["triton_version"] for c in ls_json(out)]
    assert versions == ["3.2.0", "3.6.0", "3.9.0"]


@pytest.mark.parametrize("version", ["3.0", "3.1"])
def test_autotune_compiles_every_config_under_old_triton(tmp_path, version):
    """Triton <= 3.1's autotuner calls ``triton.testing.do_bench`` itself, not the
    driver's benchmarker; compile-only must still compile all four configs. Setup
    makes the 3.0 venv (CI runs that case); 3.1's, which shares 3.0's autotuner, only
    scripts/coverage.py makes, so that case runs where the coverage matrix was made."""
    exe = VENVS / f"triton-{version}" / "bin" / "python"
    if not exe.exists():
        pytest.skip(f"{exe}: only scripts/coverage.py makes it")
    out = tmp_path / "v.irscope"
    irscope("run", SAMPLES / "matmul_autotune.py", "--python", exe, "--target", "sm_80", "-o", out, "-q",
            check=True)
    caps = ls_json(out)
    assert len(caps) == 4 and len({c["variant"] for c in caps}) == 4
