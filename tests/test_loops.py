"""Loops after Triton's software pipeliner, and the main loop's arithmetic intensity
(irscope.core.loops, irscope.core.peaks), on real captures.

The expectations were read off the IR: in the samples' final TTGIR each matmul's K
loop has num_stages - 1 async copies of each operand ahead of it, and the snapshot the
pipeliner read carries ``tt.scheduled_max_stage = num_stages - 1``. why_loops.irscope is
tests/kernels/why_loops.py captured compile-only for sm_80 and sm_90 (Triton 3.6)."""

import pytest

import irscope
from irscope.core.loops import VERDICT_COMPUTE, VERDICT_MEMORY, intensity_of, loops_of
from irscope.core.peaks import PEAKS, peaks_for

from conftest import DATA

WHY = DATA / "why_loops.irscope"


def _caps(path, kernel, target="sm_90"):
    return [c for c in irscope.open(path).captures() if c.kernel == kernel and c.target == target]


def _cap(path, kernel, target="sm_90", **fields):
    for c in _caps(path, kernel, target):
        if all(c.compile_option(k) == v for k, v in fields.items()):
            return c
    raise AssertionError(f"no {kernel} {fields} on {target} in {path}")


def _source_line(cap, line):
    src = cap.source
    return src.text.splitlines()[line - src.first_line]


@pytest.mark.parametrize("variant", [0, 1, 2, 3])
def test_sample_matmuls_are_pipelined_with_their_num_stages(variant):
    cap = irscope.open(DATA / "samples_sm90.irscope").capture("matmul_kernel", variant=variant)
    (loop,) = loops_of(cap)
    assert loop.pipelined and loop.stages == cap.num_stages
    assert loop.async_loads == 2 and loop.loads == 2 and loop.tma_loads == 0
    assert _source_line(cap, loop.line).strip().startswith("for k in range")
    assert loop.async_lines == loop.load_lines == (loop.line + 1, loop.line + 2)
    # the prologue issues num_stages - 1 iterations of both loads; the epilogue drains them
    assert loop.schedule is not None
    assert loop.schedule.prologue.count("ttg.async_copy_global_to_local") == 2 * (cap.num_stages - 1)
    assert "ttg.async_wait" in loop.schedule.epilogue
    stages = dict(loop.schedule.steady)
    assert stages[0].count("tt.load") == 2 and max(stages) == cap.num_stages - 1
    assert " = scf.for " in cap.stage("ttgir").text.splitlines()[loop.ttgir_line - 1]


def test_buffers_are_not_the_stage_count():
    # num_stages=5 with 64x32x32 tiles on sm_90: 5 stages, 4 shared buffers
    cap = irscope.open(DATA / "samples_sm90.irscope").capture("matmul_kernel", variant=3)
    (loop,) = loops_of(cap)
    assert (loop.stages, loop.buffers) == (5, 4)
    # sm_80 at num_stages=3: the dot reads its operands a stage after they land, 2 buffers
    (loop80,) = loops_of(_cap(WHY, "gemm_kernel", "sm_80", num_stages=3))
    (loop90,) = loops_of(_cap(WHY, "gemm_kernel", "sm_90", num_stages=3))
    assert (loop80.stages, loop80.buffers) == (3, 2)
    assert (loop90.stages, loop90.buffers) == (3, 3)


def test_block_pointer_gemm_and_attention():
    learner = DATA / "learner_sm90.irscope"
    (gemm,) = loops_of(_cap(learner, "block_ptr_matmul_kernel"))
    assert gemm.pipelined and gemm.stages == 3 and gemm.async_loads == 2
    (one,) = loops_of(_cap(learner, "_attn_fwd", STAGE=1))
    assert one.pipelined and one.stages == 3 and one.async_loads == 2
    # STAGE=3 inlines the inner loop twice: two loops at the same line, each with its
    # own prologue and epilogue (the second's buffers are not the first's epilogue)
    first, second = loops_of(_cap(learner, "_attn_fwd", STAGE=3))
    assert first.line == second.line and first.ttgir_line < second.ttgir_line
    for loop in (first, second):
        assert loop.pipelined and loop.stages == 3
        assert loop.schedule is not None and "ttg.local_alloc" not in loop.schedule.epilogue
        assert loop.schedule.prologue.count("ttg.async_copy_global_to_local") == 4


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_loops_the_pipeliner_leaves_alone(target):
    (gemm1,) = loops_of(_cap(WHY, "gemm_kernel", target, num_stages=1))
    assert not gemm1.pipelined and gemm1.stages == 1 and gemm1.async_loads == 0
    assert gemm1.schedule is None and gemm1.buffers is None and gemm1.requested_stages == 1
    # loads that feed no dot: Triton's latency assignment skips them (num_stages=3)
    rowsum = _cap(WHY, "rowsum_kernel", target)
    (loop,) = loops_of(rowsum)
    assert not loop.pipelined and loop.stages == 1 and loop.async_loads == 0 and loop.requested_stages == 3
    assert _source_line(rowsum, loop.line).strip().startswith("for start in range")
    # ... unless the loop asks for stages itself
    (ranged,) = loops_of(_cap(WHY, "ranged_rowsum_kernel", target))
    assert ranged.pipelined and ranged.stages == 3 and ranged.async_loads == 1 and ranged.buffers == 2
    assert loops_of(_cap(WHY, "copy_kernel", target)) == ()


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_narrow_loads_stop_the_pipeliner_and_the_remark_says_why(target):
    cap = _cap(WHY, "strided_rowsum_kernel", target)
    (loop,) = loops_of(cap, cap.remarks().items)
    assert cap.remarks().available
    # the loop asks for 3 stages (its tt.num_stages), its 16-bit strided load cannot
    # become a cp.async, and Triton leaves the loop alone
    assert loop.requested_stages == 3 and not loop.pipelined and loop.stages == 1
    assert loop.remark is not None and loop.remark.startswith("Warning: vectorization fails vec = 1")
    assert cap.loops()[0].remark == loop.remark
    # the strided GEMM: B is pipelined as an async copy, A stays a plain load
    gemm = _cap(WHY, "gemm_strided_kernel", target)
    (g,) = gemm.loops()
    assert g.pipelined and g.loads == 2 and g.async_loads == 1 and g.async_lines == (g.line + 2,)
    assert g.remark is not None and "vectorization fails" in g.remark


def test_a_remark_about_something_else_is_not_the_loops():
    # the contiguous GEMM: no remark at all; the strided one's remark is at A's load,
    # which is no line of the row-sum loop of another kernel
    cap = _cap(WHY, "gemm_kernel", num_stages=3)
    assert cap.remarks().available and cap.loops()[0].remark is None
    strided = _cap(WHY, "gemm_strided_kernel")
    (loop,) = loops_of(_cap(WHY, "ranged_rowsum_kernel"), strided.remarks().items)
    assert loop.remark is None
    # the pipelined samples have no remark
    for c in irscope.open(DATA / "samples_sm90.irscope").captures():
        assert all(lp.remark is None for lp in loops_of(c))


def test_loop_json_fields():
    (loop,) = loops_of(_cap(WHY, "gemm_kernel", num_stages=3))
    got = loop.to_json()
    assert {k: got[k] for k in ("line", "pipelined", "stages", "async_loads", "remark")} == {
        "line": loop.line, "pipelined": True, "stages": 3, "async_loads": 2, "remark": None}
    assert got["schedule"]["steady"][0]["stage"] == 0 and got["requested_stages"] == 3


def test_capture_methods_agree_with_the_functions():
    cap = _cap(WHY, "gemm_kernel", num_stages=3)
    assert cap.loops() == loops_of(cap, cap.remarks().items)
    assert cap.intensity() == intensity_of(cap)


def _gemm_ratio(m, n, k, elem_bytes=2):
    return 2 * m * n * k / ((m * k + k * n) * elem_bytes)


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_intensity_gemm_tile_vs_resident_tile(target):
    gemm = intensity_of(_cap(WHY, "gemm_kernel", target, num_stages=3))
    assert gemm is not None
    assert gemm.flops_per_iter == 2 * 64 * 64 * 32 and gemm.bytes_per_iter == (64 * 32 + 32 * 64) * 2
    assert gemm.ratio == pytest.approx(_gemm_ratio(64, 64, 32)) == pytest.approx(32.0)
    ridge = peaks_for(target).ridge("fp16")
    assert gemm.ridge == pytest.approx(ridge) and gemm.dtype == "fp16"
    assert gemm.verdict == VERDICT_MEMORY  # 32 FLOP/B < 153 (A100) and 206 (H200)
    # A stays in registers, only B streams: 256 FLOP per byte, above both ridges
    resident = intensity_of(_cap(WHY, "resident_a_kernel", target))
    assert resident is not None
    assert resident.flops_per_iter == 2 * 256 * 32 * 16 and resident.bytes_per_iter == 16 * 32 * 2
    assert resident.ratio == pytest.approx(256.0) and resident.verdict == VERDICT_COMPUTE
    assert resident.line is not None and "for n in range" in _source_line(_cap(WHY, "resident_a_kernel", target),
                                                                          resident.line)


def test_no_main_loop_intensity_without_a_dot():
    for kernel in ("copy_kernel", "rowsum_kernel", "ranged_rowsum_kernel"):
        assert intensity_of(_cap(WHY, kernel)) is None


def test_sample_intensities_follow_the_tile_shape():
    bundle = irscope.open(DATA / "samples_sm90.irscope")
    for variant in range(4):
        cap = bundle.capture("matmul_kernel", variant=variant)
        got = intensity_of(cap)
        m, n, k = (cap.variant_info.int_value(f"BLOCK_SIZE_{d}") for d in "MNK")
        assert got is not None and got.ratio == pytest.approx(_gemm_ratio(m, n, k))
        assert got.device == "NVIDIA H200"


def test_peak_table_matches_the_capture_device_table():
    from irscope.capture.child.irscope_devices import DEVICES

    assert set(PEAKS) == set(DEVICES)
    for target, peaks in PEAKS.items():
        assert peaks.device.startswith(DEVICES[target].name)
        assert peaks.tflops["fp16"] > peaks.tflops["fp32"] and peaks.bandwidth_gbs > 0
    assert peaks_for("sm_90a") is PEAKS["sm_90"] and peaks_for("gfx942:sramecc+:xnack-") is PEAKS["gfx942"]
    assert peaks_for("sm_61") is None


@pytest.mark.slow
@pytest.mark.parametrize("version", ["3.2", "3.9"])
def test_other_tritons(tmp_path, version):
    # 3.2 prints the pre-3.3 dialect names (triton_gpu.async_copy_global_to_local) and
    # no schedule (its stages are the prologue copies plus one); 3.9 prints both.
    from conftest import ROOT, VENVS, irscope as run

    exe = VENVS / f"triton-{version}" / "bin" / "python"
    assert exe.exists(), f"{exe} missing: run scripts/setup.sh"
    out = tmp_path / "v.irscope"
    run("run", ROOT / "tests" / "kernels" / "why_loops.py", "--python", exe, "-o", out, "-q", check=True)
    (gemm,) = _cap(out, "gemm_kernel", num_stages=3).loops()
    assert gemm.pipelined and gemm.stages == 3 and gemm.async_loads == 2 and gemm.buffers == 3
    assert (gemm.schedule is not None and bool(gemm.schedule.steady)) == (version == "3.9")
    (gemm1,) = _cap(out, "gemm_kernel", num_stages=1).loops()
    assert not gemm1.pipelined and gemm1.stages == 1
    (rowsum,) = _cap(out, "rowsum_kernel").loops()
    (ranged,) = _cap(out, "ranged_rowsum_kernel").loops()
    assert not rowsum.pipelined and ranged.pipelined and ranged.stages == 3
    assert _cap(out, "resident_a_kernel").intensity().verdict == VERDICT_COMPUTE
    assert _cap(out, "gemm_kernel", num_stages=3).intensity().ratio == pytest.approx(32.0)


@pytest.mark.slow
def test_amd_pipelines_through_registers(tmp_path):
    # gfx942 (Triton 3.6): the GEMM's loads stay amdg.buffer_load, issued a stage ahead
    # and stored into a 2-deep LDS ring; the last iterations are peeled after the loop
    from conftest import ROOT, irscope as run

    out = tmp_path / "amd.irscope"
    run("run", ROOT / "tests" / "kernels" / "why_loops.py", "--target", "gfx942", "-o", out, "-q", check=True)
    cap = _cap(out, "gemm_kernel", "gfx942", num_stages=3)
    (loop,) = cap.loops()
    assert loop.pipelined and loop.stages == 3 and loop.async_loads == 0 and loop.buffers == 2
    assert loop.schedule is not None and loop.schedule.epilogue.count("tt.dot") == 2
    assert loop.schedule.prologue.count("amdg.buffer_load") == 4
    (once,) = _cap(out, "gemm_kernel", "gfx942", num_stages=1).loops()
    assert not once.pipelined
    assert cap.intensity().device == "AMD Instinct MI300X"
