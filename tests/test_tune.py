"""``irscope tune``: the grid, its one-line errors, and real compiles of configurations
checked against real compiles of the same configurations made by the sample script."""

import json
import shutil

import pytest

import irscope
from irscope.cli.main import main as cli_main
from irscope.core.occupancy import occupancy
from irscope.core.tune_table import TuneTable, launch_problem, tune_tables
from irscope.errors import IrscopeError
from irscope.whatif.compile_spec import spec_of
from irscope.whatif.equivalence import compile_differences
from irscope.whatif.tune import tune
from irscope.whatif.tune_grid import Grid, check_grid, parse_grid

from conftest import DATA, SAMPLES, irscope as run_cli

SAMPLES_SM90 = DATA / "samples_sm90.irscope"
# Real compiles of matmul_kernel by sample_kernels/matmul_autotune.py (its autotune configs).
REAL_128 = 3  # BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32, num_warps=4, num_stages=4
REAL_64 = 4  # BLOCK_SIZE_M=64, the rest the same


# -- the grid (no compile) -------------------------------------------------------------

def test_grid_parses_into_every_combination_last_key_fastest():
    grid = parse_grid("BLOCK_M=64,128  num_warps=4,8;num_stages=2")
    assert grid.keys == ("BLOCK_M", "num_warps", "num_stages")
    assert len(grid) == 4
    assert grid.configs() == [
        {"BLOCK_M": 64, "num_warps": 4, "num_stages": 2}, {"BLOCK_M": 64, "num_warps": 8, "num_stages": 2},
        {"BLOCK_M": 128, "num_warps": 4, "num_stages": 2}, {"BLOCK_M": 128, "num_warps": 8, "num_stages": 2}]
    assert parse_grid("A=1,1,2 B=True,x,0.5").axes == (("A", (1, 2)), ("B", (True, "x", 0.5)))


@pytest.mark.parametrize("text, says", [
    ("", "--grid is empty"),
    ("BLOCK_M", "expected KEY=V1,V2"),
    ("BLOCK_M=", "has no values"),
    ("BLOCK_M=64 BLOCK_M=128", "given twice"),
    ("1X=2", "expected KEY=V1,V2"),
])
def test_bad_grid_text_is_one_line(text, says):
    with pytest.raises(IrscopeError, match=says):
        parse_grid(text)


def test_grid_keys_are_the_kernels_constexprs_and_the_tunable_options():
    with irscope.open(SAMPLES_SM90) as b:
        spec = spec_of(b.capture(f"#{REAL_128}"))
    check_grid(parse_grid("BLOCK_SIZE_M=64 GROUP_SIZE_M=4 num_warps=8 num_stages=2 num_ctas=1 maxnreg=128"), spec)
    # stride_ak is a runtime argument Triton specialised to 1: not a constexpr one may tune
    for text in ("stride_ak=2", "M=64", "FOO=1"):
        with pytest.raises(IrscopeError) as err:
            check_grid(parse_grid(text), spec)
        msg = str(err.value)
        assert "\n" not in msg and "not a constexpr of matmul_kernel" in msg
        assert "valid keys: BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, GROUP_SIZE_M, num_warps" in msg
    with pytest.raises(IrscopeError, match="num_warps takes whole numbers"):
        check_grid(Grid((("num_warps", (4, "x")),)), spec)


def test_dtype_values_are_written_as_the_capture_writes_dtypes():
    from dataclasses import replace

    from irscope.whatif.compile_spec import ArgSpec
    from irscope.whatif.tune_grid import typed_grid

    with irscope.open(SAMPLES_SM90) as b:
        spec = spec_of(b.capture(f"#{REAL_128}"))
    # a kernel with OUT_DTYPE: tl.constexpr, captured as tl.float16
    spec = replace(spec, args=(*spec.args, ArgSpec("OUT_DTYPE", "constexpr", constexpr=True,
                                                     value="triton.language.float16")))
    grid = typed_grid(parse_grid("OUT_DTYPE=float32,tl.bfloat16,fp16,torch.float16,triton.language.int8 "
                                 "BLOCK_SIZE_M=64 num_warps=4"), spec)
    assert grid.axes == (("OUT_DTYPE", ("triton.language.float32", "triton.language.bfloat16",
                                        "triton.language.float16", "triton.language.int8")),
                         ("BLOCK_SIZE_M", (64,)), ("num_warps", (4,)))


def test_cli_errors_are_one_line_with_no_compile(tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a kernel")
    out = ["-o", str(tmp_path / "t.irscope")]
    cases = [
        ([str(SAMPLES_SM90), "matmul_kernel", "--grid", "FOO=1", *out], "--grid key FOO is not a constexpr of matmul_kernel"),
        ([str(SAMPLES_SM90), "matmul_kernel", "--grid", "BLOCK_SIZE_M", *out], "expected KEY=V1,V2"),
        ([str(SAMPLES_SM90), "matmul_kernel", "--grid", "num_warps=4", "--jobs", "0", *out], "--jobs 0"),
        ([str(SAMPLES_SM90), "no_such_kernel", "--grid", "num_warps=4", *out], "no_such_kernel"),
        ([str(notes), "k", "--grid", "A=1"], "neither an irscope bundle nor a Python script"),
        ([str(tmp_path / "missing.irscope"), "k", "--grid", "A=1"], "no such bundle or script"),
    ]
    for argv, says in cases:
        assert cli_main(["tune", *argv]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and says in err and err.startswith("irscope: error: "), err
    assert not (tmp_path / "t.irscope").exists()  # nothing compiled, nothing written


def test_the_configurations_are_dealt_to_the_children_round_robin_per_target():
    from irscope.whatif.tune import _shares

    configs = parse_grid("BLOCK=16,32,64,128,256").configs()
    shares = _shares(configs, ("sm_80", "sm_90"), 4)
    assert [(s.target, [c["BLOCK"] for c in s.configs]) for s in shares] == [
        ("sm_80", [16, 64, 256]), ("sm_80", [32, 128]), ("sm_90", [16, 64, 256]), ("sm_90", [32, 128])]
    assert [len(s.configs) for s in _shares(configs, ("sm_80", "sm_90"), 1)] == [5, 5]  # a child per target at least
    assert len(_shares(configs[:1], ("sm_90",), 8)) == 1  # never more children than configurations


def test_launch_problem_reads_the_targets_limits():
    with irscope.open(SAMPLES_SM90) as b:
        cap = b.capture(f"#{REAL_128}")
        r = cap.resources
    assert launch_problem(cap.occupancy) is None  # it launched on the H200 the bundle's limits are checked against
    big = occupancy("sm_80", num_warps=4, registers=r.registers, shared_bytes=200 * 1024)
    assert launch_problem(big) == "shared memory 200 KiB over the 163 KiB a block may use on sm_80"
    many = occupancy("sm_90", num_warps=32, registers=r.registers, shared_bytes=r.shared)
    assert "registers x 32 warps over the 65536 registers a block may have on sm_90" in (launch_problem(many) or "")


# -- real compiles ---------------------------------------------------------------------

@pytest.fixture(scope="session")
def matmul_tune(tmp_path_factory):
    """Two configurations of the captured matmul compiled by ``tune`` (two jobs): the
    same two the sample script's autotuner compiled into tests/data/samples_sm90."""
    tmp = tmp_path_factory.mktemp("tune")
    source = tmp / "samples.irscope"
    shutil.copy(SAMPLES_SM90, source)  # tune writes into the input bundle by default
    with irscope.open(source) as b:
        before = {c.id for c in b.captures()}
        cap = b.capture("#2")  # BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, num_warps=8, num_stages=3
        grid = parse_grid("BLOCK_SIZE_M=128,64 BLOCK_SIZE_N=128 BLOCK_SIZE_K=32 num_warps=4 num_stages=4")
        seen: list[tuple[int, int]] = []
        table = tune(str(source), cap, grid, jobs=2, on_progress=lambda done, total, last: seen.append((done, total)))
    return source, table, seen, before


@pytest.mark.slow
def test_tune_agrees_with_the_scripts_own_compiles(matmul_tune):
    source, table, seen, before = matmul_tune
    assert [r.label for r in table.rows] == [
        "BLOCK_SIZE_M=128,BLOCK_SIZE_N=128,BLOCK_SIZE_K=32,num_warps=4,num_stages=4",
        "BLOCK_SIZE_M=64,BLOCK_SIZE_N=128,BLOCK_SIZE_K=32,num_warps=4,num_stages=4"]
    assert sorted(seen) == [(1, 2), (2, 2)]
    with irscope.open(source) as b:
        for row, real_id in zip(table.rows, (REAL_128, REAL_64)):
            real, tuned = b.capture(f"#{real_id}"), b.capture(f"#{row.capture_id}")
            assert row.compiled and tuned.id not in before and tuned.variant == real.variant
            assert compile_differences(real, tuned, ("ttir", "ttgir")) == []  # TTGIR, registers, spills, shared
            f = row.figures
            assert f is not None and (f.registers, f.shared) == (real.resources.registers, real.resources.shared)
            assert f.warps_per_sm == real.occupancy.warps_per_sm and f.limited_by == real.occupancy.limited_by
            assert row.mma_kind == "HGMMA.64x128x16.F32"
            assert row.intensity == pytest.approx(real.intensity().ratio)
            assert f.sass_by_class is not None and f.sass_by_class["mma"] > 0 and f.async_copies
            assert not row.cannot_launch and not row.spills


@pytest.mark.slow
def test_the_table_is_attached_to_the_base_capture_and_reads_back(matmul_tune):
    source, table, _, _ = matmul_tune
    with irscope.open(source) as b:
        tables = tune_tables(b)
        assert [t.to_json() for t in tables] == [table.to_json()]
        assert tune_tables(b, "add_kernel") == []
    again = TuneTable.from_json(json.loads(json.dumps(table.to_json())))
    assert again.row(BLOCK_SIZE_M=64).capture_id == table.rows[1].capture_id
    with pytest.raises(IrscopeError, match="has no row BLOCK_SIZE_M=32"):
        again.row(BLOCK_SIZE_M=32)


@pytest.mark.slow
def test_the_text_table_has_a_row_per_configuration(matmul_tune):
    from rich.console import Console

    from irscope.cli.tune_cmd import render

    _, table, _, _ = matmul_tune
    console = Console(record=True, width=220)
    console.print(render(table))
    text = console.export_text()
    assert "matmul_kernel: 2 configuration(s) on sm_90" in text
    lines = [ln for ln in text.splitlines() if "HGMMA.64x128x16.F32" in ln]
    assert len(lines) == 2
    for line, row in zip(lines, table.rows):
        cells = line.split()
        assert cells[:5] == [str(v) for v in row.config.values()]
        assert str(row.figures.registers) in cells and cells[-1] == str(row.capture_id)


@pytest.mark.slow
def test_a_script_is_captured_first_and_a_config_that_cannot_compile_is_a_failed_row(tmp_path):
    script = tmp_path / "vector_add.py"
    shutil.copy(SAMPLES / "vector_add.py", script)
    out = tmp_path / "va.irscope"
    p = run_cli("tune", script, "add_kernel", "--grid", "BLOCK_SIZE=1024,1000 num_warps=4,64",
                "--target", "sm_80", "-o", out, "--json", check=True)
    table = json.loads(p.stdout)
    ok, wide, bad, bad_wide = table["rows"]
    assert table["targets"] == ["sm_80"] and table["base_capture_id"] == 1
    assert ok["compiled"] and ok["target"] == "sm_80" and ok["registers"] and not ok["cannot_launch"]
    assert ok["config"] == {"BLOCK_SIZE": 1024, "num_warps": 4} and not ok["spills_mark"]
    # 64 warps compile, but a block of 2048 threads cannot launch
    assert wide["compiled"] and wide["cannot_launch"] and wide["blocks_per_sm"] == 0
    assert wide["launch_problem"] == "2048 threads over the 1024 a block may have"
    for row in (bad, bad_wide):
        assert not row["compiled"] and row["failed_at"] == "frontend" and "power of 2" in row["error"]
        assert "\n" not in row["error"] and row["capture_id"] is not None
    with irscope.open(out) as b:
        script_cap, tuned = b.capture("#1"), b.capture(f"#{ok['capture_id']}")
        assert compile_differences(script_cap, tuned) == []  # the script's own compile, up to file names
        assert b.capture(f"#{bad['capture_id']}").failed
    # The kernel's file no longer loads on its own: the source the bundle holds compiles it.
    script.write_text("import no_such_module_for_irscope_tests\n" + script.read_text())
    p = run_cli("tune", out, "add_kernel", "--grid", "BLOCK_SIZE=256", "--json", check=True)
    again = json.loads(p.stdout)
    (row,) = again["rows"]
    assert row["compiled"] and row["registers"] and again["targets"] == ["sm_80"]
    assert any("No module named 'no_such_module_for_irscope_tests'" in n for n in again["notes"])
    with irscope.open(out) as b:
        assert len(b.runs()) == 3  # the script, the first tune, the retry: the attempt that compiled nothing left none
        assert len(tune_tables(b)) == 2


@pytest.mark.slow
def test_an_amd_capture_tunes_to_the_same_compile(tmp_path):
    # AMD records tt.pointer_range beside the divisibility: a tune must give it back
    out = tmp_path / "ln.irscope"
    with irscope.open(DATA / "layer_norm_gfx942.irscope") as b:
        cap = b.capture("_layer_norm_fwd_fused")
        table = tune(str(DATA / "layer_norm_gfx942.irscope"), cap, parse_grid("BLOCK_SIZE=1024"), out_path=str(out))
        (row,) = table.rows
        assert row.compiled and row.target == "gfx942" and table.targets == ("gfx942",)
        with irscope.open(out) as tuned:
            assert compile_differences(cap, tuned.capture(f"#{row.capture_id}")) == []
