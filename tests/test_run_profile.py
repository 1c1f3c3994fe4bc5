"""``irscope run --profile``: its profiler command line, its attaching half on the real
H200 data (tests/data/profiles: the profiled run's export and tree, as the GPU made them),
and its one-line errors on a machine without a GPU. The whole command ran on an H200:
scripts/gpu_profile_check.py, docs/gpu-check.md."""

from __future__ import annotations

import json
import shutil

import pytest

import irscope
from conftest import DATA, SAMPLES, irscope as run_cli
from conftest_profiles import PROFILES
from irscope.capture.profile_attach import attach_ncu, attach_proton, attach_run
from irscope.capture.profile_run import ProfilerRun, gpu_present, ncu_command, ncu_kernel_filter
from irscope.cli.run_profile import run_profile_json
from irscope.core.profile import profile_of, profiles_of
from irscope.profiles.ncu_source import parse_ncu_source


def _copy(tmp_path, name):
    path = tmp_path / f"{name}.irscope"
    shutil.copy(PROFILES / name / "gpu.irscope", path)
    return path


def _run(name, tool="ncu", output="sass.csv"):
    return ProfilerRun(tool, str(PROFILES / name / output), "NVIDIA H200", "2025.3.1.0", "2026-12-03T16:40:00Z",
                       1.0, "")


def test_ncu_command_profiles_only_the_captured_kernels():
    cmd = ncu_command("/usr/bin/ncu", "/usr/bin/python3", "s.py", ["--n", "3"], ["_attn_fwd", "add_kernel", "_attn_fwd"],
                      4, "/tmp/x/profile")
    assert cmd[cmd.index("-k") + 1] == "regex:^(_attn_fwd|add_kernel)$"
    assert cmd[cmd.index("-c") + 1] == "4"
    assert cmd[cmd.index("--clock-control") + 1] == "none"  # a lent GPU's clocks are left alone
    assert cmd[-4:] == ["/usr/bin/python3", "s.py", "--n", "3"]
    assert ncu_kernel_filter(["a.b"]) == r"regex:^(a\.b)$"


def test_each_variant_gets_the_launches_that_ran_it(tmp_path):
    """flash_attention: two variants, one launch each; every block goes to its own variant."""
    path = _copy(tmp_path, "flash_attention")
    text = (PROFILES / "flash_attention" / "sass.csv").read_text()
    blocks = parse_ncu_source(text)
    attached, notes = attach_ncu(str(path), [1, 2], _run("flash_attention"), text)
    assert notes == []
    assert [(a.capture_id, a.launches) for a in attached] == [(1, 1), (2, 1)]
    # STAGE=1 has 1392 instructions, STAGE=3 2288: each profile is its own block's samples.
    by_size = {len(b.instructions): b.total_samples for b in blocks}
    assert [a.total_samples for a in attached] == [by_size[1392], by_size[2288]]
    with irscope.open(path) as b:
        stamps = [profiles_of(c) for c in b.captures()]
    assert [[(s.id, s.tool, s.launches, s.gpu, s.source) for s in st] for st in stamps] == [
        [(attached[0].profile_id, "ncu", 1, "NVIDIA H200", "irscope run --profile")],
        [(attached[1].profile_id, "ncu", 1, "NVIDIA H200", "irscope run --profile")]]


def test_launches_of_one_variant_merge_and_other_variants_get_none(tmp_path):
    """matmul_autotune: both profiled launches ran the 128x256x64 config (capture #1)."""
    path = _copy(tmp_path, "matmul_autotune")
    text = (PROFILES / "matmul_autotune" / "sass.csv").read_text()
    attached, notes = attach_ncu(str(path), [1, 2, 3, 4], _run("matmul_autotune"), text)
    assert [(a.capture_id, a.launches) for a in attached] == [(1, 2)]
    assert attached[0].total_samples == sum(b.total_samples for b in parse_ncu_source(text))
    assert [n.split(" ", 1)[0] for n in notes] == ["#2", "#3", "#4"]
    assert all("nothing attached" in n and "SASS" in n for n in notes)
    with irscope.open(path) as b:
        assert [len(profiles_of(c)) for c in b.captures()] == [1, 0, 0, 0]


def test_proton_goes_to_the_first_capture_of_each_name(tmp_path):
    path = _copy(tmp_path, "flash_attention")
    text = (PROFILES / "flash_attention" / "proton.hatchet").read_text()
    attached, notes = attach_proton(str(path), [1, 2], _run("flash_attention", "proton", "proton.hatchet"), text)
    assert notes == [] and [(a.capture_id, a.launches) for a in attached] == [(1, 2)]
    with irscope.open(path) as b:
        first, second = b.captures()
        (stamp,) = profiles_of(first)
        assert profiles_of(second) == ()
    assert stamp.tool == "proton" and stamp.launches == 2 and "every launch and variant" in stamp.notes[0]


def test_json_gives_each_capture_what_was_attached_to_it(tmp_path):
    """``run --profile --json``: ``run --json``'s captures, each with the profile the run
    attached (the flash_attention export: one launch per variant) or why it got none
    (matmul_autotune: the three configs no profiled launch ran)."""
    path = _copy(tmp_path, "flash_attention")
    text = (PROFILES / "flash_attention" / "sass.csv").read_text()
    outcome = attach_run(str(path), [1, 2], _run("flash_attention"), text)
    rows = run_profile_json(str(path), [1, 2], outcome)
    listed = json.loads(run_cli("ls", path, "--json", check=True).stdout)
    assert [{k: v for k, v in r.items() if k not in ("profile", "profile_note")} for r in rows] == listed
    with irscope.open(path) as b:
        for row, a in zip(rows, outcome.attached):
            hot = profile_of(b.capture(f"#{row['id']}"))
            p = row["profile"]
            assert (p["id"], p["tool"], p["launches"], p["gpu"], p["source"]) == (
                a.profile_id, "ncu", 1, "NVIDIA H200", "irscope run --profile")
            assert p["total_samples"] == a.total_samples == hot.total_samples > 0
            assert p["unattributed"] == hot.unattributed
            assert p["label"] == hot.stamp.label() and p["label"].startswith(f"#{a.profile_id} ncu 2025.3.1.0")
            assert row["profile_note"] is None
    path = _copy(tmp_path, "matmul_autotune")
    text = (PROFILES / "matmul_autotune" / "sass.csv").read_text()
    outcome = attach_run(str(path), [1, 2, 3, 4], _run("matmul_autotune"), text)
    rows = run_profile_json(str(path), [1, 2, 3, 4], outcome)
    assert [r["profile"]["launches"] if r["profile"] else None for r in rows] == [2, None, None, None]
    assert [r["profile_note"] for r in rows[1:]] == list(outcome.notes)
    assert all(n.startswith(f"#{r['id']} ") and "nothing attached" in n for r, n in zip(rows[1:], outcome.notes))
    # the profiling failed (or never ran): the captures, with no profile
    assert [(r["profile"], r["profile_note"]) for r in run_profile_json(str(path), [1, 2], None)] == [(None, None)] * 2


def test_json_of_a_proton_run_is_on_the_first_capture_of_the_name(tmp_path):
    path = _copy(tmp_path, "flash_attention")
    text = (PROFILES / "flash_attention" / "proton.hatchet").read_text()
    outcome = attach_run(str(path), [1, 2], _run("flash_attention", "proton", "proton.hatchet"), text)
    first, second = run_profile_json(str(path), [1, 2], outcome)
    assert first["profile"]["tool"] == "proton" and first["profile"]["launches"] == 2
    assert first["profile"]["total_samples"] == outcome.attached[0].total_samples > 0
    assert second["profile"] is None and second["profile_note"] is None


def test_profile_with_a_target_is_refused(tmp_path):
    out = tmp_path / "x.irscope"
    p = run_cli("run", SAMPLES / "vector_add.py", "--profile", "--target", "sm_90", "-o", out, "-q")
    assert p.returncode == 1 and p.stderr.count("\n") == 1
    assert "leave out --target" in p.stderr and not out.exists()


@pytest.mark.skipif(gpu_present(), reason="this machine has a GPU")
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_profile_without_a_gpu_is_one_line_and_captures_nothing(tmp_path, json_flag):
    out = tmp_path / "x.irscope"
    p = run_cli("run", SAMPLES / "vector_add.py", "--profile", "--profiler", "proton", "-o", out, "-q", *json_flag)
    assert p.returncode == 1 and p.stderr.count("\n") == 1 and p.stdout == "", p.stderr
    assert "needs an NVIDIA GPU" in p.stderr and "irscope profile import" in p.stderr
    assert not out.exists()


@pytest.mark.parametrize("flags, says", [
    (["--profile-launches", "0"], "--profile-launches 0: must be at least 1"),
    pytest.param(["--profiler", "ncu"], "--profiler ncu: no ncu on PATH",
                 marks=pytest.mark.skipif(shutil.which("ncu") is not None, reason="ncu is on PATH here")),
])
def test_bad_profile_flags_are_one_line(tmp_path, flags, says):
    out = tmp_path / "x.irscope"
    p = run_cli("run", SAMPLES / "vector_add.py", "--profile", *flags, "-o", out, "-q")
    assert p.returncode == 1 and p.stderr.startswith(f"irscope: error: {says}")
    assert p.stderr.count("\n") == 1 and not out.exists()


# `irscope run --profile` of fused_softmax on the H200 (scripts/gpu_profile_check.py): the
# bundle holds the profile it attached (source "irscope run --profile") and two imports of
# the report it kept, made there (its CSV export, the .ncu-rep); the CSV is checked in too.
H200_RUN = DATA / "h200_run_profile.irscope"
H200_RUN_CSV = DATA / "h200_run_profile_sass.csv"
H200_RUN_PROTON = DATA / "h200_run_profile_proton.irscope"


def _figures(hot):
    return (hot.total_samples, hot.unattributed,
            sorted((h.file, h.line, h.samples, sorted(h.stalls.items()), h.how) for h in hot.lines),
            [(o.stage_line, o.samples) for o in hot.ops("sass")], [(o.stage_line, o.samples) for o in hot.ops("ttgir")])


def test_run_profile_on_the_gpu_equals_an_import_of_its_report(tmp_path):
    bundle = tmp_path / "run.irscope"
    shutil.copy(H200_RUN, bundle)
    imported = run_cli("profile", "import", bundle, "softmax_kernel", H200_RUN_CSV, "--json", check=True)
    (new,) = json.loads(imported.stdout)
    with irscope.open(bundle) as b:
        cap = b.capture("softmax_kernel")
        stamps = {s.source: s for s in cap.profiles()}
        assert set(stamps) == {"irscope run --profile", "sass.csv", "profile.ncu-rep", "h200_run_profile_sass.csv"}
        run = stamps["irscope run --profile"]
        assert (run.tool, run.gpu, run.tool_version, run.launches) == ("ncu", "NVIDIA H200", "2025.3.1.0", 1)
        mine = _figures(cap.profile(run.id))
        assert mine[0] == 1011 and mine[1] == 0
        for other in ("sass.csv", "profile.ncu-rep", "h200_run_profile_sass.csv"):
            assert _figures(cap.profile(stamps[other].id)) == mine, other
    assert new["id"] == stamps["h200_run_profile_sass.csv"].id


def test_run_profile_with_proton_on_the_gpu():
    with irscope.open(H200_RUN_PROTON) as b:
        cap = b.capture("softmax_kernel")
        (stamp,) = cap.profiles()
        hot = cap.profile()
    assert (stamp.tool, stamp.gpu, stamp.tool_version, stamp.source) == (
        "proton", "NVIDIA H200", "Triton 3.6.0", "irscope run --profile")
    assert sum(h.samples for h in hot.lines) + hot.unattributed == hot.total_samples == 2854
    # tl.max's samples (triton/language/standard.py) are on its call line, 28.
    assert hot.lines[0].line == 28 and hot.lines[0].how == "call-site"


def test_a_failed_profiler_run_says_why_in_one_line():
    from irscope.capture.profile_run import failure_line

    log = ("==PROF== Connected to process 7\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n"
           "Traceback (most recent call last):\nRuntimeError: boom\n")
    assert failure_line(log).startswith("==ERROR== ERR_NVGPUCTRPERM")
    assert failure_line("ok\nRuntimeError: boom\n\n") == "RuntimeError: boom"
    assert failure_line("") == "no output"
