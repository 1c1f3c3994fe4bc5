"""``irscope profile import|ls|rm`` on copies of the real H200 captures of tests/data/profiles/.

The command runs in-process (``irscope.cli.main.main``) for speed; the error contract
(one line on stderr, exit 1, no traceback) is checked as a whole process too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import irscope
from irscope.cli.main import main
from irscope.core.profile import profiles_of

PROFILES = Path(__file__).resolve().parent / "data" / "profiles"
STAMP = ["--gpu", "NVIDIA H200", "--tool-version", "2025.3.1.0", "--date", "2026-12-03T16:40:00Z"]


def _copy(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.irscope"
    shutil.copy(PROFILES / name / "gpu.irscope", path)
    return path


def _run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    rc = main([str(a) for a in args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _listed(capsys: pytest.CaptureFixture[str], bundle: Path) -> list[dict]:
    rc, out, _ = _run(capsys, "profile", "ls", bundle, "--json")
    assert rc == 0
    return json.loads(out)


def test_import_ncu_export_with_stamps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _copy(tmp_path, "vector_add")
    rc, out, err = _run(capsys, "profile", "import", bundle, "add_kernel", PROFILES / "vector_add" / "sass.csv", *STAMP)
    assert rc == 0 and err == ""
    assert out.startswith("profile #1 attached to capture #1 add_kernel [")
    (row,) = _listed(capsys, bundle)
    assert {k: row[k] for k in ("id", "capture_id", "tool", "tool_version", "gpu", "date", "launches", "kernel",
                                "source", "total_samples")} == {
        "id": 1, "capture_id": 1, "tool": "ncu", "tool_version": "2025.3.1.0", "gpu": "NVIDIA H200",
        "date": "2026-12-03T16:40:00Z", "launches": 1, "kernel": "add_kernel", "source": "sass.csv",
        "total_samples": 79}
    with irscope.open(str(bundle)) as b:
        (stamp,) = profiles_of(b.capture("add_kernel"))
        assert stamp.id == 1 and stamp.total_samples == 79


def test_import_by_name_gives_each_variant_its_launch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """flash_attention's export holds one launch of each STAGE variant: by name, each
    capture gets its own, with a note that the other launch was another code."""
    bundle = _copy(tmp_path, "flash_attention")
    rc, out, _ = _run(capsys, "profile", "import", bundle, "_attn_fwd", PROFILES / "flash_attention" / "sass.csv",
                      *STAMP)
    assert rc == 0
    rows = _listed(capsys, bundle)
    assert [(r["capture_id"], r["total_samples"], r["launches"]) for r in rows] == [(1, 922, 1), (2, 634, 1)]
    assert all(any("another variant" in n for n in r["notes"]) for r in rows)


def test_import_merges_launches_of_one_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """matmul: both launches ran the 128x256x64 config (capture #1): merged into one
    profile there, none on the three other configs."""
    bundle = _copy(tmp_path, "matmul_autotune")
    rc, _, _ = _run(capsys, "profile", "import", bundle, "matmul_kernel", PROFILES / "matmul_autotune" / "sass.csv")
    assert rc == 0
    (row,) = _listed(capsys, bundle)
    assert (row["capture_id"], row["launches"], row["total_samples"]) == (1, 2, 115)
    # No --date: the file's modification time, and a note saying so.
    assert row["date"].endswith("Z") and "date: the imported file's modification time" in row["notes"]


def test_import_of_another_variants_profile_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The 128x256 profile into the 128x128 config: one line naming the offset and both
    texts, exit 1, nothing attached."""
    bundle = _copy(tmp_path, "matmul_autotune")
    rc, out, err = _run(capsys, "profile", "import", bundle, "#2", PROFILES / "matmul_autotune" / "sass.csv")
    assert rc == 1 and out == ""
    assert err.count("\n") == 1
    assert ("SASS differs at offset 0x0010: profile `LDC.64 R2, c[0x0][0x228]`, capture `LDC.64 R4, c[0x0][0x228]`"
            in err)
    assert "capture #2" in err and "nothing attached" in err
    assert _listed(capsys, bundle) == []
    rc, _, err = _run(capsys, "profile", "import", bundle, "matmul_kernel", PROFILES / "matmul_autotune" / "sass.csv",
                      "--variant", "BLOCK_SIZE_M=64 num_warps=2")
    assert rc == 1 and "capture #4" in err and _listed(capsys, bundle) == []


def test_import_proton_hatchet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _copy(tmp_path, "fused_softmax")
    rc, _, _ = _run(capsys, "profile", "import", bundle, "softmax_kernel", PROFILES / "fused_softmax" / "proton.hatchet",
                    "--tool-version", "triton 3.6.0")
    assert rc == 0
    (row,) = _listed(capsys, bundle)
    assert (row["tool"], row["gpu"], row["launches"], row["total_samples"]) == ("proton", "sm_90, 132 SMs", 1, 3062)
    assert any("Proton merges every launch and variant" in n for n in row["notes"])


def test_rm_and_ls_filters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _copy(tmp_path, "flash_attention")
    assert _run(capsys, "profile", "import", bundle, "_attn_fwd", PROFILES / "flash_attention" / "sass.csv")[0] == 0
    assert _run(capsys, "profile", "import", bundle, "#1", PROFILES / "flash_attention" / "proton.hatchet")[0] == 0
    rc, out, _ = _run(capsys, "profile", "ls", bundle, "#2", "--json")
    assert rc == 0 and [r["id"] for r in json.loads(out)] == [2]
    rc, out, _ = _run(capsys, "profile", "ls", bundle)
    # Capture by capture: capture #1's ncu and Proton profiles, then capture #2's.
    assert rc == 0 and [ln.split(",")[0] for ln in out.splitlines()] == ["#1 ncu", "#3 proton", "#2 ncu"]
    assert _run(capsys, "profile", "rm", bundle, "#1") == (0, "profile #1 removed\n", "")
    assert [r["id"] for r in _listed(capsys, bundle)] == [3, 2]
    rc, _, err = _run(capsys, "profile", "rm", bundle, "1")
    assert rc == 1 and "no profile #1 in" in err
    rc, _, err = _run(capsys, "profile", "rm", bundle, "one")
    assert rc == 1 and "is not a number" in err


@pytest.mark.parametrize("kernel, file, says", [
    ("add_kernel", "missing.csv", "missing.csv: no such file"),
    ("add_kernel", "env.txt", "env.txt: not a profile (an Nsight Compute source export"),
    ("add_kernel", "gpu.irscope", "gpu.irscope: not a profile"),
    ("no_such_kernel", "sass.csv", "no kernel 'no_such_kernel' in"),
    ("add_kernel", "fused_softmax/sass.csv", "sass.csv: no launch of 'add_kernel' in it (6 launch(es) of: void at::"),
    ("add_kernel", "fused_softmax/proton.hatchet", "proton.hatchet: no samples of kernel 'add_kernel' in it"),
    ("add_kernel", "report.ncu-rep", "reading a .ncu-rep needs Nsight Compute's ncu on PATH"),
    ("add_kernel", "folder", "is a directory, not a profile"),
])
def test_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                               kernel: str, file: str, says: str) -> None:
    bundle = _copy(tmp_path, "vector_add")
    shutil.copy(PROFILES / "env.txt", tmp_path / "env.txt")
    shutil.copy(PROFILES / "vector_add" / "gpu.irscope", tmp_path / "gpu.irscope")
    (tmp_path / "folder").mkdir()
    # A report's first bytes (ncu's magic) then anything: the kind is read from the bytes.
    (tmp_path / "report.ncu-rep").write_bytes(b"NVR\x00" + os.urandom(64))
    monkeypatch.setenv("PATH", str(tmp_path))  # no ncu here
    monkeypatch.delenv("IRSCOPE_NCU", raising=False)
    path = PROFILES / file if "/" in file or file == "sass.csv" else tmp_path / file
    if file == "sass.csv":
        path = PROFILES / "vector_add" / "sass.csv"
    rc, out, err = _run(capsys, "profile", "import", bundle, kernel, path)
    assert rc == 1 and out == ""
    assert says in err and err.startswith("irscope: error: ") and err.count("\n") == 1
    assert _listed(capsys, bundle) == []


def test_refusal_is_one_line_as_a_process(tmp_path: Path) -> None:
    bundle = _copy(tmp_path, "flash_attention")
    p = subprocess.run([sys.executable, "-m", "irscope", "profile", "import", str(bundle), "#2",
                        str(PROFILES / "vector_add" / "sass.csv")], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr == "irscope: error: sass.csv: no launch of '_attn_fwd' in it (1 launch(es) of: add_kernel)\n"


def _fake_ncu(folder: Path, source_csv: Path, fail: bool = False) -> None:
    """An ``ncu`` stand-in for reading a report: prints the real export for the source
    page, a raw page naming the GPU, and the version line ncu 2025.3.1 prints."""
    script = folder / "ncu"
    script.write_text(f"""#!/bin/sh
case "$*" in
  *--version*) echo "NVIDIA (R) Nsight Compute Command Line Profiler"; \
echo "Version 2025.3.1.0 (build 36398880) (public-release)";;
  *"--page source --csv --print-source sass"*) {"echo '==ERROR== bad report' >&2; exit 1" if fail
                                                  else f"cat '{source_csv}'"};;
  *"--page raw --csv"*) echo '"ID","Kernel Name","device__attribute_display_name"'; echo '"","",""'; \
echo '"0","add_kernel","NVIDIA H200"';;
  *) exit 3;;
esac
""")
    script.chmod(0o755)


def test_import_a_report_through_ncu(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A .ncu-rep is read with `ncu -i`: the source page is the profile, the raw page
    names the GPU, `ncu --version` the version (no --gpu/--tool-version needed)."""
    bundle = _copy(tmp_path, "vector_add")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_ncu(bin_dir, PROFILES / "vector_add" / "sass.csv")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("IRSCOPE_NCU", raising=False)
    report = tmp_path / "R.ncu-rep"
    report.write_bytes(b"NVR\x00" + bytes(60))
    rc, out, err = _run(capsys, "profile", "import", bundle, "add_kernel", report)
    assert rc == 0, err
    (row,) = _listed(capsys, bundle)
    assert (row["gpu"], row["tool_version"], row["source"], row["total_samples"]) == (
        "NVIDIA H200", "2025.3.1.0", "R.ncu-rep", 79)
    _fake_ncu(bin_dir, PROFILES / "vector_add" / "sass.csv", fail=True)
    rc, out, err = _run(capsys, "profile", "import", bundle, "add_kernel", report)
    assert rc == 1 and err == f"irscope: error: {report}: ncu -i failed: ==ERROR== bad report\n"


def _shifted_hatchet(tmp_path: Path, name: str, kernel: str, shift: int, how_many: int | None) -> Path:
    """The real hatchet with the line numbers of ``how_many`` of the kernel's line nodes
    (all: None) moved by ``shift``: the profile of an edited script."""
    data = json.loads((PROFILES / name / "proton.hatchet").read_text())
    node = next(n for n in data[0]["children"] if n["frame"]["name"] == kernel)
    for child in node["children"][:how_many]:
        path, rest = child["frame"]["name"].rsplit(":", 1)
        line, owner = rest.split("@", 1)
        child["frame"]["name"] = f"{path}:{int(line) + shift}@{owner}"
    out = tmp_path / "shifted.hatchet"
    out.write_text(json.dumps(data))
    return out


def test_proton_lines_are_checked_against_the_capture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every sampled line of a different script: refused. One of them: attached, with
    a note counting its samples."""
    bundle = _copy(tmp_path, "layer_norm")
    moved = _shifted_hatchet(tmp_path, "layer_norm", "_layer_norm_fwd_fused", 1000, None)
    rc, _, err = _run(capsys, "profile", "import", bundle, "_layer_norm_fwd_fused", moved)
    assert rc == 1 and err.count("\n") == 1
    assert "none of the 29 lines Proton sampled for _layer_norm_fwd_fused" in err and "nothing attached" in err
    assert _listed(capsys, bundle) == []
    one = _shifted_hatchet(tmp_path, "layer_norm", "_layer_norm_fwd_fused", 1000, 1)
    rc, _, err = _run(capsys, "profile", "import", bundle, "_layer_norm_fwd_fused", one)
    assert rc == 0, err
    (row,) = _listed(capsys, bundle)
    stray = [n for n in row["notes"] if "line(s) no captured SASS of _layer_norm_fwd_fused has" in n]
    assert len(stray) == 1 and stray[0].startswith("76 samples on 1 line(s)")
    assert row["total_samples"] == 2045  # the stray line's samples are kept, not dropped


def test_ls_by_kernel_name_lists_every_variant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _copy(tmp_path, "flash_attention")
    assert _run(capsys, "profile", "import", bundle, "_attn_fwd", PROFILES / "flash_attention" / "sass.csv")[0] == 0
    rc, out, _ = _run(capsys, "profile", "ls", bundle, "_attn_fwd", "--json")
    assert rc == 0 and [r["capture_id"] for r in json.loads(out)] == [1, 2]
    rc, out, _ = _run(capsys, "profile", "ls", bundle, "_attn_fwd", "--variant", "STAGE=3", "--json")
    assert rc == 0 and [r["capture_id"] for r in json.loads(out)] == [2]
    rc, _, err = _run(capsys, "profile", "ls", bundle, "--target", "sm_90")
    assert rc == 1 and "--target and --variant need a KERNEL" in err


def test_compile_only_captures_accept_the_gpu_exports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The workflow of the issue: capture with no GPU, profile on the GPU, import.
    tests/data/samples_sm90.irscope was captured compile-only (no GPU); the H200's
    exports of the same sample scripts match it instruction by instruction, and by
    name matmul's launches find their config (#2, 128x256x64) among the four."""
    bundle = tmp_path / "samples.irscope"
    shutil.copy(PROFILES.parent / "samples_sm90.irscope", bundle)
    for name, kernel, capture_id, samples in (("vector_add", "add_kernel", 1, 79),
                                               ("jit_helper_call", "bias_gelu_rowsum_kernel", 6, 630),
                                               ("matmul_autotune", "matmul_kernel", 2, 115)):
        rc, _, err = _run(capsys, "profile", "import", bundle, kernel, PROFILES / name / "sass.csv")
        assert rc == 0, err
        row = max(_listed(capsys, bundle), key=lambda r: r["id"])
        assert (row["kernel"], row["capture_id"], row["total_samples"]) == (kernel, capture_id, samples)
    assert len(_listed(capsys, bundle)) == 3
