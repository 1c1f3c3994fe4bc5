"""``irscope tune`` on a kernel with ``@triton.heuristics``: the constexprs they set
are computed again for each configuration, as a launch computes them, so that a tune
agrees with the script's own compiles of the same configurations; a kernel file with
no ``__main__`` guard adds no compiles of its own to the tune; tuple parameters keep
their element types, constants and divisibility; tensor descriptors get the block
shapes the autotuner's ``pre_hook`` sets for each configuration."""

import json
import shutil
import sys
from pathlib import Path

import pytest

import irscope
from irscope.core.tune_table import tune_row
from irscope.whatif.equivalence import compile_differences
from irscope.whatif.tune import heuristics_decorators, with_heuristics

from conftest import irscope as run_cli

KERNEL = Path(__file__).parent / "kernels" / "tune_heuristics.py"
DESCRIPTORS = Path(__file__).parent / "kernels" / "tune_descriptors.py"
CHILD_DIR = Path(irscope.__file__).parent / "capture" / "child"


def _child():
    """The grid child's module (standard library and Triton only: importable here)."""
    sys.path.insert(0, str(CHILD_DIR))
    try:
        import irscope_compile_grid
    finally:
        sys.path.remove(str(CHILD_DIR))
    return irscope_compile_grid


def test_heuristics_are_computed_in_launch_order_from_the_launch_and_the_job():
    child = _child()
    heuristics = [{"EVEN": lambda a: a["n"] % a["BLOCK"] == 0},
                  {"HALF": lambda a: a["BLOCK"] // 2 if a["EVEN"] else a["BLOCK"],
                   "ROWS": lambda a: a["x"].shape[0] * a["rows"]}]
    launch = {"n": {"value": 960}, "x": {"shape": [64, 960], "stride": [960, 1], "dtype": "float32"}}
    got, kept = child._heuristic_values(heuristics, launch, {"BLOCK": 64, "EVEN": False, "HALF": 1, "ROWS": 0}, set())
    assert got == {"EVEN": True, "HALF": 32} and list(kept) == ["ROWS"]
    assert kept["ROWS"] == "KeyError: 'rows'"  # the capture recorded no such argument: the captured value stays
    # a heuristic the grid sets is the grid's; the rest see its value
    got, kept = child._heuristic_values(heuristics, launch, {"BLOCK": 256, "EVEN": True}, {"EVEN"})
    assert got == {"HALF": 128} and list(kept) == ["ROWS"]
    # the options reach them too, as an autotuner's config's do; a parameter wins
    warps = [{"W": lambda a: a["num_warps"] * 32, "S": lambda a: a["num_stages"]}]
    got, _ = child._heuristic_values(warps, {}, {"num_stages": 4}, set(), {"num_warps": 8, "num_stages": 2})
    assert got == {"W": 256, "S": 4}


def test_descriptor_block_shapes_come_from_the_configs_pre_hook():
    child = _child()

    def hook(nargs):
        nargs["a"].block_shape = [nargs["BM"], nargs["BK"]]

    sig = {"a": "tensordesc<fp16[64, 32]>", "b": "tensordesc<fp16[16, 16]>", "n": "i32"}
    assert child._descriptor_types(hook, sig, {"BM": 128, "BK": 32}) == ({"a": "tensordesc<fp16[128, 32]>"}, None)
    assert child._descriptor_types(hook, sig, {"BM": 64, "BK": 32}) == ({}, None)  # the captured shape
    assert child._descriptor_types(hook, sig, {"BM": 128}) == ({}, "KeyError: 'BK'")
    assert child._descriptor_types(None, sig, {"BM": 128, "BK": 32}) == ({}, None)


def test_the_rebuilt_module_gets_the_kernels_heuristics_back_from_its_file():
    text = KERNEL.read_text()
    (deco,) = heuristics_decorators(text, "rows_kernel")
    assert deco.startswith('@triton.heuristics({\n    "EVEN": lambda args:') and deco.endswith("})")
    rebuilt = "import triton\n\n\n@triton.jit\ndef rows_kernel(x_ptr):\n    pass\n"
    assert with_heuristics(rebuilt, "rows_kernel", text) == rebuilt.replace("@triton.jit", deco + "\n@triton.jit")
    assert with_heuristics(rebuilt, "rows_kernel", None) == rebuilt
    # a heuristics dict that is not lambdas would be evaluated when the module loads: left out
    other = "import triton\nH = {}\n\n@triton.heuristics(H)\n@triton.jit\ndef rows_kernel(x):\n    pass\n"
    assert heuristics_decorators(other, "rows_kernel") == []


@pytest.mark.slow
def test_tune_recomputes_heuristics_and_agrees_with_the_scripts_own_compiles(tmp_path):
    script = tmp_path / "tune_heuristics.py"
    shutil.copy(KERNEL, script)
    out = tmp_path / "th.irscope"
    p = run_cli("tune", script, "rows_kernel", "--grid", "BLOCK=64,256 num_stages=2", "--target", "sm_80",
                "-o", out, "--json", check=True)
    table = json.loads(p.stdout)
    assert table["base_capture_id"] == 1 and table["targets"] == ["sm_80"]
    assert table["notes"] == ["the kernel's @triton.heuristics computed EVEN, HALF, num_warps again for each "
                              "configuration, from the captured launch's arguments"]
    with irscope.open(out) as b:
        # the script's three compiles and the two of the grid: loading the script in the
        # grid's process launched nothing
        assert len(b.captures()) == 5
        for row, real_id, even in zip(table["rows"], (2, 3), (True, False)):
            real, tuned = b.capture(f"#{real_id}"), b.capture(f"#{row['capture_id']}")
            assert tuned.id > 3 and tuned.constexprs["EVEN"] is even
            assert tuned.constexprs == real.constexprs  # num_stages: the constexpr too, not only the option
            assert tuned.options["num_warps"] == real.options["num_warps"] == (2 if even else 4)
            assert tuned.constexprs["(3, 1)"] == 1 and tuned.info["attrs"] == real.info["attrs"]  # tuples
            assert compile_differences(real, tuned, ("ttir", "ttgir")) == []
            mine = tune_row(row["config"], "sm_80", real)
            assert mine.figures is not None and mine.figures == tune_row(row["config"], "sm_80", tuned).figures
            assert (row["registers"], row["shared"]) == (real.resources.registers, real.resources.shared)
    # The file no longer loads on its own: the rebuilt module takes the heuristics from it.
    script.write_text("import no_such_module_for_irscope_tests\n" + script.read_text())
    p = run_cli("tune", out, "rows_kernel", "--variant", "0", "--grid", "BLOCK=64", "--json", check=True)
    again = json.loads(p.stdout)
    (row,) = again["rows"]
    assert any("computed EVEN, HALF, num_warps again" in n for n in again["notes"])
    with irscope.open(out) as b:
        assert b.capture(f"#{row['capture_id']}").constexprs == {**b.capture("#2").constexprs, "num_stages": 3}


@pytest.mark.slow
def test_tune_types_tensor_descriptors_as_the_pre_hook_does(tmp_path):
    out = tmp_path / "desc.irscope"
    p = run_cli("tune", DESCRIPTORS, "copy_kernel", "--grid", "BLOCK_M=32", "-o", out, "--json", check=True)
    table = json.loads(p.stdout)
    assert table["notes"] == ["the autotuner's pre_hook set the block shapes of the tensor descriptors x_desc, "
                              "y_desc for each configuration"]
    (row,) = table["rows"]
    with irscope.open(out) as b:
        assert b.capture("#1").failed  # the autotuner's first config: the grid starts from the first that compiled
        base, real, tuned = b.capture("#2"), b.capture("#3"), b.capture(f"#{row['capture_id']}")
        assert base.info["signature"]["x_desc"] == "tensordesc<fp16[64, 64]>" and table["base_capture_id"] == 2
        assert tuned.info["signature"] == real.info["signature"]  # tensordesc<fp16[32, 64]>
        assert compile_differences(real, tuned, ("ttir", "ttgir")) == []
        assert row["shared"] == real.resources.shared
