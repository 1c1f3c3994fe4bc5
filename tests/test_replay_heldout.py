"""Replay and tune on held-out kernels (tests/kernels/heldout_b_*.py): two matmul
loops one after the other, both pipelined. The script compiles the kernel with
num_stages=4 and 2; those are the real compiles a replay with ``--set num_stages``
and a tune of ``num_stages`` must equal. One capture, one replay child, one tune
child for all the checks."""

from pathlib import Path

import pytest

import irscope
from conftest import ROOT, irscope as run_cli
from irscope.compiler.failure_text import pipeline_diagnostic
from irscope.compiler.stages import LLIR, PTX, TTGIR
from irscope.core.tune_table import mma_kind, tune_row
from irscope.whatif.equivalence import compile_differences
from irscope.whatif.replay import ReplayRequest, replay_many
from irscope.whatif.tune import tune
from irscope.whatif.tune_grid import parse_grid

TWO_LOOPS = Path(__file__).parent / "kernels" / "heldout_b_two_loops.py"
ASYNC_COPY = "ttg.async_copy_global_to_local"

# What Triton 3.6 printed when the FMA lowering met f16 operands (a replay of a matmul
# without tritongpu-accelerate-matmul): the lines around it, as the capture's log has them.
FMA_LOG = """\
    tt.return
  }
}
python: /project/lib/Conversion/TritonGPUToLLVM/DotOpToLLVM/FMA.cpp:28: virtual Value (anonymous namespace)::\
GenericFMAVectorMultiplier::multiplyVectors(ArrayRef<Value>, ArrayRef<Value>, Value): Assertion `aElem.getType() \
== tgtTy' failed.
kernel.py:13:0: error: Failures have been detected while processing an MLIR pass pipeline
kernel.py:13:0: note: Pipeline failed while executing [`ConvertTritonGPUToLLVM` on 'builtin.module' operation]
"""


def test_a_failed_pass_is_told_by_what_it_printed():
    assert pipeline_diagnostic(FMA_LOG) == "assertion `aElem.getType() == tgtTy' failed (FMA.cpp:28)"
    # the generic line alone says nothing more than PassManager::run failed
    assert pipeline_diagnostic(FMA_LOG.splitlines()[-2]) is None
    assert pipeline_diagnostic("k.py:3:7: error: 'tt.dot' op operand types differ\n") == "'tt.dot' op operand types differ"
    assert pipeline_diagnostic("LLVM ERROR: Cannot select: intrinsic\n") == "LLVM ERROR: Cannot select: intrinsic"
    assert pipeline_diagnostic("") is None


@pytest.fixture(scope="module")
def two_loops(tmp_path_factory):
    """The script's capture (#1 num_stages=4, #2 num_stages=2, sm_90), and one replay
    run: #1 with num_stages=2, #1 without the pipeliner, #1 without the MMA pass."""
    tmp = tmp_path_factory.mktemp("heldout")
    bundle, out = tmp / "two_loops.irscope", tmp / "replays.irscope"
    run_cli("run", TWO_LOOPS, "--target", "sm_90", "-o", bundle, "-q", "--no-open", check=True, cwd=ROOT)
    reqs = [ReplayRequest(str(bundle), 1, "ttir", (("num_stages", "2"),)),
            ReplayRequest(str(bundle), 1, "ttir", without=("tritongpu-pipeline",)),
            ReplayRequest(str(bundle), 1, "ttir", without=("tritongpu-accelerate-matmul",))]
    return bundle, out, replay_many(reqs, str(out))


@pytest.mark.slow
def test_two_pipelined_loops_replay_as_the_script_compiles_them(two_loops):
    bundle, out, (stages, no_pipe, no_mma) = two_loops
    with irscope.open(str(bundle)) as orig, irscope.open(str(out)) as rep:
        four, two = orig.capture("#1"), orig.capture("#2")
        assert (four.options["num_stages"], two.options["num_stages"]) == (4, 2)
        got = rep.capture(f"#{stages.capture_id}")
        assert stages.ok and compile_differences(two, got, stages=(TTGIR, LLIR, PTX)) == []
        assert compile_differences(four, got, stages=(TTGIR,)) != []
        # both loops were pipelined; without the pipeliner neither is
        assert four.stage(TTGIR).text.count(ASYNC_COPY) == 16
        assert no_pipe.ok and ASYNC_COPY not in rep.capture(f"#{no_pipe.capture_id}").stage(TTGIR).text


@pytest.mark.slow
def test_a_replay_that_fails_in_a_pass_says_why(two_loops):
    _, out, (_, _, no_mma) = two_loops
    assert not no_mma.ok and no_mma.failed_pass and "convert-triton-gpu-to-llvm" in no_mma.failed_pass
    # Triton's exception says only "PassManager::run failed": the pass printed the reason
    assert no_mma.error.startswith("RuntimeError: PassManager::run failed: assertion `")
    assert "\n" not in no_mma.error
    with irscope.open(str(out)) as rep:
        assert rep.capture(f"#{no_mma.capture_id}").error == no_mma.error


@pytest.mark.slow
def test_tune_of_num_stages_agrees_with_the_scripts_compiles(two_loops, tmp_path):
    bundle, _, _ = two_loops
    out = tmp_path / "tune.irscope"
    with irscope.open(str(bundle)) as b:
        table = tune(str(bundle), b.capture("#1"), parse_grid("num_stages=2,4"), out_path=str(out))
        with irscope.open(str(out)) as t:
            for row, real_id in zip(table.rows, (2, 1)):
                real, tuned = b.capture(f"#{real_id}"), t.capture(f"#{row.capture_id}")
                assert row.compiled and tuned.variant == real.variant
                assert compile_differences(real, tuned) == []  # TTIR to PTX, registers, spills, shared
                assert row.figures == tune_row(row.config, "sm_90", real).figures  # SASS by class too
                assert row.mma_kind == mma_kind(real) and row.mma_kind.startswith("HGMMA")
