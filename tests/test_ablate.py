"""Pass ablation: the figures of a compiled capture, the effect score and ranking, the
table stored as an attachment, and `irscope passes --ablate` replaying real kernels."""

import json
import math
import shutil

import pytest

import irscope
from conftest import DATA, irscope as run_cli
from irscope.compiler.stages import SASS, TTGIR
from irscope.core.experiments import (Ablation, AblationRow, Figures, ablation_of, ablation_row, ablations,
                                      diff_size, effect_score, figures_of, ranked, sass_classes)
from irscope.errors import IrscopeError
from irscope.irdiff.engine import diff_modules
from irscope.ir.instr_classes import ASYNC_COPY, MMA

LOOPS = DATA / "why_loops.irscope"
LEARNER = DATA / "learner_sm90.irscope"
SAMPLES = DATA / "samples_sm90.irscope"


def _cap(bundle, kernel, target, **fields):
    """The capture of ``kernel`` on ``target`` whose variant has these fields."""
    want = [f"{k}={v}" for k, v in fields.items()]
    found = [c for c in bundle.captures(kernel) if c.target == target and all(w in c.variant.split(",") for w in want)]
    assert len(found) == 1, [c.variant for c in found]
    return found[0]


@pytest.fixture(scope="module")
def loops():
    with irscope.open(str(LOOPS)) as b:
        yield b


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_figures_of_a_pipelined_gemm_against_an_unpipelined_one(loops, target):
    piped = figures_of(_cap(loops, "gemm_kernel", target, num_stages=3))
    plain = figures_of(_cap(loops, "gemm_kernel", target, num_stages=1))
    # The pipeliner turns the loop's two loads into async copies (prologue, loop, epilogue).
    assert piped.async_copies and piped.async_copies > 0 and plain.async_copies == 0
    assert piped.mma == plain.mma == 1  # one tt.dot on tensor cores, on both targets
    assert piped.sass_by_class is not None and plain.sass_by_class is not None
    assert piped.sass_by_class[ASYNC_COPY] > 0 and plain.sass_by_class[ASYNC_COPY] == 0
    assert piped.sass_by_class[MMA] > 0
    assert piped.shared is not None and plain.shared is not None and piped.shared > plain.shared
    assert piped.warps_per_sm is not None and piped.limited_by in ("warps", "registers", "shared", "blocks")


def test_figures_agree_with_the_core(loops):
    cap = _cap(loops, "gemm_kernel", "sm_90", num_stages=3)
    f = figures_of(cap)
    occ = cap.occupancy
    assert occ is not None
    assert (f.registers, f.spills, f.shared) == (cap.resources.registers, cap.resources.spills, cap.resources.shared)
    assert (f.blocks_per_sm, f.warps_per_sm, f.limited_by) == (occ.blocks_per_sm, occ.warps_per_sm, occ.limited_by)
    assert f.ttgir_ops == len(list(cap.stage(TTGIR).module.ops()))
    assert f.sass_total == sum(1 for op in cap.stage(SASS).module.ops() if op.name and op.name != "<unknown>")
    assert Figures.from_json(json.loads(json.dumps(f.to_json()))) == f


def test_a_failed_capture_has_no_sass_classes():
    with irscope.open(str(LEARNER)) as b:
        assert sass_classes(b.capture("frontend_kernel")) is None


def test_diff_size_is_the_structural_diff(loops):
    a = _cap(loops, "gemm_kernel", "sm_80", num_stages=3)
    b = _cap(loops, "gemm_kernel", "sm_80", num_stages=1)
    assert diff_size(a, a) == 0
    d = diff_modules(a.stage(TTGIR).module, b.stage(TTGIR).module, TTGIR)
    assert diff_size(a, b) == len(d.changes) > 0


def test_effect_score(loops):
    a = figures_of(_cap(loops, "gemm_kernel", "sm_80", num_stages=3))
    b = figures_of(_cap(loops, "gemm_kernel", "sm_80", num_stages=1))
    assert effect_score(a, a, 0) == 0
    assert math.isinf(effect_score(a, None, None))
    score = effect_score(a, b, 40)
    assert 0 < score <= 8
    # Each term is bounded: more diff, more effect, up to the op count.
    assert effect_score(a, b, 10) < effect_score(a, b, 40) <= effect_score(a, b, 10**6)
    assert effect_score(a, b, 10**6) == effect_score(a, b, a.ttgir_ops)


def _rows(loops):
    piped = _cap(loops, "gemm_kernel", "sm_80", num_stages=3)
    plain = _cap(loops, "gemm_kernel", "sm_80", num_stages=1)
    strided = _cap(loops, "gemm_strided_kernel", "sm_80")
    with irscope.open(str(LEARNER)) as learner:
        failed = ablation_row("fails", piped, learner.capture("ptxas_kernel"))
    return piped, [ablation_row("same", piped, piped), ablation_row("unpiped", piped, plain),
                   ablation_row("strided", piped, strided), failed]


def test_rows_rank_failures_first_then_by_effect(loops):
    _, rows = _rows(loops)
    table = ranked(rows)
    assert [r.rank for r in table] == [1, 2, 3, 4]
    assert table[0].pass_name == "fails" and not table[0].compiled
    assert [r.effect for r in table[1:]] == sorted((r.effect for r in table[1:]), reverse=True)
    assert table[-1].pass_name == "same" and table[-1].no_effect and table[-1].diff_size == 0


def test_a_failed_replay_row_says_where_and_why_in_one_line(loops):
    _, rows = _rows(loops)
    failed = rows[-1]
    assert failed.failed_at == "cubin" and failed.figures is None and failed.registers is None
    assert failed.error is not None and "\n" not in failed.error and failed.error.startswith("PTXASError")
    assert failed.to_json()["effect"] is None
    assert AblationRow.from_json(json.loads(json.dumps(failed.to_json()))) == failed


def test_the_table_is_stored_on_its_capture_and_read_back(loops, tmp_path):
    from irscope.whatif.ablate import save_ablation

    bundle = tmp_path / "loops.irscope"
    shutil.copy(LOOPS, bundle)
    piped, rows = _rows(loops)
    with irscope.open(str(bundle)) as b:
        assert ablations(b) == []  # none yet (the copy may be of an older schema)
    table = Ablation(piped.kernel, piped.target, piped.variant, piped.id, "loops.ablate.irscope", TTGIR, "ttir",
                     figures_of(piped), ranked(rows), control=rows[0], triton_version=piped.triton_version,
                     notes=("a note",))
    save_ablation(str(bundle), table)
    with irscope.open(str(bundle)) as b:
        back = ablation_of(b.capture(f"#{piped.id}"))
        assert back == table
        assert ablation_of(b.capture("copy_kernel", target="sm_80")) is None
        assert back.replays_path(str(bundle)) == str(tmp_path / "loops.ablate.irscope")
        assert back.row("unpiped").compiled
        with pytest.raises(IrscopeError, match="no pass 'nope'.*unpiped"):
            back.row("nope")


def test_a_damaged_table_is_a_one_line_error():
    with pytest.raises(IrscopeError, match="damaged"):
        Ablation.from_json({"kernel": "k"})


@pytest.mark.parametrize("flags, message", [
    (["--jobs", "2"], "--jobs goes only with --ablate"),
    (["--without-pass", "tritongpu-pipeline", "-o", "x.irscope"], "--without-pass, --output go only with --ablate"),
    (["--ablate", "--jobs", "0"], "--jobs must be 1 or more"),
    (["--ablate", "--origins"], "takes no --origins"),
])
def test_ablation_flags_misused_are_one_line_errors(flags, message):
    p = run_cli("passes", SAMPLES, "add_kernel", *flags)
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and message in p.stderr and "Traceback" not in p.stderr


def test_an_unknown_pass_is_a_one_line_error_listing_the_passes(tmp_path):
    bundle = tmp_path / "s.irscope"
    shutil.copy(SAMPLES, bundle)
    p = run_cli("passes", bundle, "add_kernel", "--ablate", "--without-pass", "no-such-pass")
    assert p.returncode == 1 and p.stdout == "" and p.stderr.count("\n") == 1
    assert "unknown pass 'no-such-pass'" in p.stderr and "tritongpu-pipeline" in p.stderr
    assert not (tmp_path / "s.ablate.irscope").exists()  # nothing ran


def test_a_capture_that_did_not_compile_cannot_be_ablated(tmp_path):
    bundle = tmp_path / "l.irscope"
    shutil.copy(LEARNER, bundle)
    p = run_cli("passes", bundle, "frontend_kernel", "--ablate")
    assert p.returncode == 1 and p.stderr.count("\n") == 1 and "did not compile" in p.stderr


# -- real replays ------------------------------------------------------------------

LLIR_EXTRA = "triton-nvidia-gpu-proxy-fence-insertion"


@pytest.fixture(scope="module")
def add_ablation(tmp_path_factory):
    """`irscope passes --ablate --jobs 2 --json` of add_kernel (a copy of the sample
    bundle), with one extra pass of the LLVM lowering."""
    folder = tmp_path_factory.mktemp("ablate")
    bundle = folder / "s.irscope"
    shutil.copy(SAMPLES, bundle)
    p = run_cli("passes", bundle, "add_kernel", "--ablate", "--jobs", "2", "--without-pass", LLIR_EXTRA, "--json",
                check=True)
    return bundle, json.loads(p.stdout)


@pytest.mark.slow
def test_ablation_covers_every_ttgir_pass_and_ranks_them(add_ablation):
    from irscope.whatif.ablate import unchanged_passes
    from irscope.whatif.replay import known_passes

    bundle, out = add_ablation
    table = Ablation.from_json(out)
    with irscope.open(str(bundle)) as b:
        cap = b.capture("add_kernel")
        assert sorted(r.pass_name for r in table.rows) == sorted((*known_passes(cap, TTGIR), LLIR_EXTRA))
        extra = table.row(LLIR_EXTRA)
        assert extra.stage == "llir" and extra.replayed and extra.compiled and extra.diff_size is not None
        assert [r.rank for r in table.rows] == list(range(1, len(table.rows) + 1))
        assert [r.effect for r in table.rows] == sorted((r.effect for r in table.rows), reverse=True)
        # The control replay reproduces the original compile.
        assert table.control is not None and table.control.compiled and table.control.diff_size == 0
        assert table.control.effect == 0 and table.notes == ()
        # Every pass is replayed, and those that changed nothing in the original compile
        # have no effect: what --skip-unchanged assumes when it does not replay them.
        inert = unchanged_passes(cap)
        changed = {p.row.argument for p in cap.passes(TTGIR) if p.step.changed}
        assert inert and not inert & changed
        for r in table.rows:
            assert r.replayed and r.capture_id is not None, r
            if r.pass_name in inert and r.stage == TTGIR:
                assert r.no_effect and r.figures == table.control.figures, r
        # Some pass that did change the IR is felt.
        assert any(r.effect > 0 for r in table.rows if r.pass_name in changed)
        # The table is attached to the capture, as printed.
        assert ablation_of(cap) == table
    with irscope.open(table.replays_path(str(bundle))) as replays:
        ids = [c.id for c in replays.captures()]
        assert sorted(ids) == sorted([table.control.capture_id, *(r.capture_id for r in table.rows if r.replayed)])


@pytest.mark.slow
def test_skip_unchanged_gives_the_control_s_row_to_passes_that_changed_nothing(tmp_path):
    from irscope.whatif.ablate import unchanged_passes

    bundle = tmp_path / "s.irscope"
    shutil.copy(SAMPLES, bundle)
    p = run_cli("passes", bundle, "add_kernel", "--ablate", "--jobs", "2", "--skip-unchanged", "--json", check=True)
    table = Ablation.from_json(json.loads(p.stdout))
    with irscope.open(str(bundle)) as b:
        inert = unchanged_passes(b.capture("add_kernel"))
    assert table.control is not None and {r.pass_name for r in table.rows if not r.replayed} == inert
    for r in table.rows:
        if not r.replayed:
            assert r.capture_id is None and r.figures == table.control.figures and r.no_effect
    with irscope.open(table.replays_path(str(bundle))) as replays:
        assert len(replays.captures()) == 1 + sum(1 for r in table.rows if r.replayed)


@pytest.mark.slow
def test_the_ablation_table_as_text(add_ablation):
    import io

    from rich.console import Console

    from irscope.cli.ablate_cmd import print_table

    bundle, out = add_ablation
    table = Ablation.from_json(out)
    buf = io.StringIO()
    print_table(table, Console(file=buf, width=250), str(bundle), table.replays_path(str(bundle)))
    text = " ".join(buf.getvalue().split())
    inert = [r.pass_name + ("" if r.replayed else "*") for r in table.rows if r.no_effect]
    felt = [r for r in table.rows if not r.no_effect]
    assert felt and inert
    assert not any("*" in name for name in inert)  # every pass replayed
    assert f"no measured effect ({len(inert)}): " in text
    assert ", ".join(inert) in text
    for r in felt:  # a row each, with its rank
        assert f"│ {r.rank} │ {r.pass_name} " in text


@pytest.mark.slow
def test_leaving_out_the_pipeliner_leaves_no_async_copies(tmp_path):
    from irscope.whatif.ablate import ablate, unchanged_passes

    bundle = tmp_path / "loops.irscope"
    shutil.copy(LOOPS, bundle)
    seen = []
    with irscope.open(str(bundle)) as b:
        cap = _cap(b, "gemm_kernel", "sm_80", num_stages=3)
        assert "tritongpu-F32DotTC" in unchanged_passes(cap)  # fp16 operands: nothing for it to do
        # Named passes are replayed, even one that changed nothing.
        table = ablate(str(bundle), cap, only=("tritongpu-pipeline", "tritongpu-F32DotTC"), save=False,
                       on_progress=lambda done, total, label: seen.append((done, total, label)))
        assert ablation_of(cap) is None  # save=False
    assert [(d, t) for d, t, _ in seen] == [(1, 3), (2, 3), (3, 3)]
    assert sorted(label for _, _, label in seen) == ["", "tritongpu-F32DotTC", "tritongpu-pipeline"]
    piped = table.row("tritongpu-pipeline")
    assert piped.rank == 1 and piped.compiled and piped.async_copies == 0 and piped.diff_size
    assert table.baseline.async_copies and piped.shared is not None and piped.shared < (table.baseline.shared or 0)
    assert piped.sass_by_class is not None and piped.sass_by_class[ASYNC_COPY] == 0
    # What not replaying a pass that changed nothing assumes, shown by replaying one.
    dot = table.row("tritongpu-F32DotTC")
    assert dot.replayed and dot.capture_id is not None and dot.no_effect
