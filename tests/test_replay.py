"""`irscope replay`: recompiling a captured kernel from its TTIR or TTGIR, with options
set, passes left out, another Triton. Real compiles throughout (no mocks): a replay
with num_stages=2 must be the same compile as a real compile of the script with
num_stages=2; leaving the pipeliner out must leave no async copies."""

import json
import re
import textwrap

import pytest

import irscope
from conftest import DATA, ROOT, VENVS, irscope as run_cli
from irscope.compiler.stages import LLIR, PTX, TTGIR
from irscope.errors import IrscopeError
from irscope.store.attachments import attachments
from irscope.store.bundle import Bundle as StoreBundle
from irscope.whatif.equivalence import compile_differences
from irscope.whatif.replay import (ReplayOutcome, ReplayRequest, _chunks, check_request, known_passes, option_value,
                                   parse_set, replay_many)

SAMPLES = DATA / "samples_sm90.irscope"  # matmul_kernel #5: num_stages=5, num_warps=2
LEARNER = DATA / "learner_sm90.irscope"  # _attn_fwd #2: STAGE=3, num_stages=3
HELPERS = (SAMPLES, 6)  # bias_gelu_rowsum_kernel: a loop the pipeliner leaves alone (its values keep their names)
MATMUL, ATTN = (SAMPLES, 5), (LEARNER, 2)
ASYNC_COPY = "ttg.async_copy_global_to_local"

# A real compile from Python: each kernel of the list compiled with Triton's own ASTSource,
# with the captured signature, specialisation and constexprs, and the options given.
REAL_COMPILE = textwrap.dedent('''
    import importlib.util, json, sys
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    for job in json.load(open(sys.argv[1])):
        spec = importlib.util.spec_from_file_location("k%d" % len(sys.modules), job["file"])
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        fn = getattr(mod, job["kernel"])
        while not hasattr(fn, "src"):  # an Autotuner or Heuristics holds the JIT function in .fn
            fn = fn.fn
        names = list(fn.arg_names)
        sig = job["signature"]
        consts = {(names.index(k),): v for k, v in job["constexprs"].items()}
        attrs = {(names.index(k),): v for k, v in job["attrs"].items()}
        src = ASTSource(fn, sig, constexprs=consts, attrs=attrs)
        triton.compile(src, target=GPUTarget("cuda", 90, 32), options=job["options"])
''')


def _cap(path, cap_id):
    return irscope.open(str(path)).capture(f"#{cap_id}")


@pytest.fixture(scope="module")
def replays(tmp_path_factory):
    """One replay_many run (one child process): num_stages=2 of the matmul and of the
    attention kernel, the matmul without the pipeliner, the matmul for sm_80, and
    num_stages=2 of the kernel with an unpipelined loop."""
    out = tmp_path_factory.mktemp("replay") / "replays.irscope"
    reqs = [ReplayRequest(str(MATMUL[0]), MATMUL[1], "ttir", (("num_stages", "2"),)),
            ReplayRequest(str(ATTN[0]), ATTN[1], "ttir", (("num_stages", "2"),)),
            ReplayRequest(str(MATMUL[0]), MATMUL[1], "ttir", without=("tritongpu-pipeline",)),
            ReplayRequest(str(MATMUL[0]), MATMUL[1], "ttir", target="sm80"),
            ReplayRequest(str(HELPERS[0]), HELPERS[1], "ttir", (("num_stages", "2"),))]
    seen = []
    outcomes = replay_many(reqs, str(out), on_progress=lambda done, total, o: seen.append((done, total)))
    return out, outcomes, seen


@pytest.fixture(scope="module")
def real_compiles(tmp_path_factory):
    """The matmul, the attention kernel and the helper-calling kernel compiled from their
    Python with num_stages=2."""
    tmp = tmp_path_factory.mktemp("real")
    jobs = []
    for path, cap_id in (MATMUL, ATTN, HELPERS):
        cap = _cap(path, cap_id)
        jobs.append({"file": str(ROOT / cap.file), "kernel": cap.kernel, "signature": cap.info["signature"],
                     "constexprs": cap.constexprs, "attrs": cap.info["attrs"],
                     "options": {"num_warps": cap.options["num_warps"], "num_stages": 2}})
    (tmp / "jobs.json").write_text(json.dumps(jobs))
    (tmp / "real.py").write_text(REAL_COMPILE)
    out = tmp / "real.irscope"
    run_cli("run", tmp / "real.py", "--target", "sm_90", "-o", out, "-q", "--no-open", "--", tmp / "jobs.json",
            check=True, cwd=ROOT)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("which, replayed", [(0, 0), (1, 1), (2, 4)], ids=["matmul", "attention", "loop"])
def test_set_num_stages_equals_a_real_compile(replays, real_compiles, which, replayed):
    out, outcomes, _ = replays
    o = outcomes[replayed]
    assert o.ok and o.error is None and o.capture_id is not None
    with irscope.open(str(real_compiles)) as real, irscope.open(str(out)) as rep:
        a, b = real.captures()[which], rep.capture(f"#{o.capture_id}")
        assert a.options["num_stages"] == b.options["num_stages"] == 2
        assert compile_differences(a, b, stages=(TTGIR, LLIR, PTX)) == []
        assert a.resources.registers == b.resources.registers and a.resources.shared == b.resources.shared
        if which < 2:  # a pipelined loop: num_stages changed something
            orig = _cap(*(MATMUL, ATTN)[which])
            assert compile_differences(orig, b, stages=(TTGIR,)) != []


@pytest.mark.slow
def test_without_the_pipeliner_no_async_copies(replays):
    out, outcomes, _ = replays
    o = outcomes[2]
    assert o.ok and o.dropped == ("tritongpu-pipeline",)
    orig = _cap(o.request.bundle, o.request.capture_id)
    assert ASYNC_COPY in orig.stage(TTGIR).text
    with irscope.open(str(out)) as rep:
        cap = rep.capture(f"#{o.capture_id}")
        assert ASYNC_COPY not in cap.stage(TTGIR).text
        args = [p.row.argument for p in cap.passes(TTGIR)]
        assert "tritongpu-pipeline" not in args and "tritongpu-assign-latencies" in args


@pytest.mark.slow
def test_another_target(replays):
    out, outcomes, _ = replays
    o = outcomes[3]
    assert o.ok and o.request.target == "sm80"
    with irscope.open(str(out)) as rep:
        cap = rep.capture(f"#{o.capture_id}")
        ttgir = cap.stage(TTGIR).text
        assert cap.target == "sm_80" and 'ttg.target = "cuda:80"' in ttgir
        assert ".target sm_80" in cap.stage(PTX).text and ".target sm_90" in _cap(*MATMUL).stage(PTX).text
        assert cap.resources.registers is not None


@pytest.mark.slow
def test_a_replay_that_fails_to_compile_is_a_failed_capture(tmp_path):
    out = tmp_path / "r.irscope"
    p = run_cli("replay", SAMPLES, "#5", "--set", "num_warps=3", "-o", out)
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("irscope: error:")]
    assert p.returncode == 4 and len(errors) == 1 and "Traceback" not in p.stderr
    assert "failed to compile" in errors[0] and "power of 2" in errors[0]
    with irscope.open(str(out)) as rep:
        (cap,) = rep.captures()
        assert cap.failed and "power of 2" in cap.error


@pytest.mark.slow
def test_replays_are_stamped_named_as_the_original_and_progress_is_told(replays):
    out, outcomes, seen = replays
    assert seen == [(i, 5) for i in range(1, 6)]
    with StoreBundle.open(str(out)) as store:
        stamps = {a.capture_id: a for a in attachments(store, kind="replay")}
    assert sorted(stamps) == sorted(o.capture_id for o in outcomes)
    s = stamps[outcomes[0].capture_id]
    assert s.data["sets"] == {"num_stages": "2"} and s.data["source_capture"] == MATMUL[1]
    assert s.data["from"] == "ttir" and s.data["triton"].startswith("3.")
    assert stamps[outcomes[2].capture_id].data["dropped"] == ["tritongpu-pipeline"]
    with irscope.open(str(out)) as rep:
        cap = rep.capture(f"#{outcomes[0].capture_id}")
        orig = _cap(*MATMUL)
        assert (cap.kernel, cap.file, cap.constexprs) == (orig.kernel, orig.file, orig.constexprs)
        assert "num_stages=2" in cap.variant and "num_stages=5" in orig.variant
        assert cap.notes[0].startswith(f"replay of #{MATMUL[1]} matmul_kernel") and "num_stages=2" in cap.notes[0]


@pytest.mark.slow
def test_diff_shows_what_the_replay_changed(replays):
    out, outcomes, _ = replays
    p = run_cli("diff", f"{MATMUL[0]}:#{MATMUL[1]}", f"{out}:#{outcomes[0].capture_id}", "--json", check=True)
    data = json.loads(p.stdout)
    assert "num_stages" in json.dumps(data) and data


ROWS_KERNEL = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def rows_kernel(y_ptr, x_ptr, stride, n_rows, n_cols, BLOCK: tl.constexpr, num_stages: tl.constexpr):
        step = tl.num_programs(0)
        for row in tl.range(tl.program_id(0), n_rows, step, num_stages=num_stages):
            cols = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
            tl.store(y_ptr + row * stride + cols, x - tl.max(x, axis=0), mask=cols < n_cols)


    x = torch.randn(64, 1000, device="cuda")
    y = torch.empty_like(x)
    for stages in (3, 2):  # the constexpr and the option, as Triton's softmax tutorial passes them
        rows_kernel[(8,)](y, x, x.stride(0), 64, 1000, BLOCK=1024, num_stages=stages)
''')


@pytest.mark.slow
def test_num_stages_that_is_also_a_constexpr_sets_both(tmp_path):
    """A kernel whose ``num_stages`` constexpr is its loop's ``num_stages=`` (Triton's
    softmax tutorial): ``--set num_stages=2`` sets the option and the loop's stages,
    and equals the script's own compile with num_stages=2 (the capture beside it)."""
    (tmp_path / "rows.py").write_text(ROWS_KERNEL)
    bundle, out = tmp_path / "rows.irscope", tmp_path / "r.irscope"
    run_cli("run", tmp_path / "rows.py", "-o", bundle, "-q", "--no-open", check=True, cwd=tmp_path)
    run_cli("replay", bundle, "#1", "--set", "num_stages=2", "-o", out, "-q", check=True)
    with irscope.open(str(bundle)) as orig, irscope.open(str(out)) as rep:
        three, two, got = orig.capture("#1"), orig.capture("#2"), rep.captures()[0]
        assert three.constexprs["num_stages"] == 3 and two.constexprs["num_stages"] == 2
        assert got.constexprs["num_stages"] == 2 and got.options["num_stages"] == 2
        assert compile_differences(two, got, stages=(TTGIR, LLIR, PTX)) == []
        assert compile_differences(three, got, stages=(TTGIR,)) != []


def test_unknown_pass_lists_the_known_ones():
    cap = _cap(*MATMUL)
    known = known_passes(cap, TTGIR)
    assert "tritongpu-pipeline" in known and "convert-triton-to-tritongpu" not in known
    assert len(set(known)) == len(known)
    with pytest.raises(IrscopeError, match=r"unknown pass 'tritongpu-pipelin'.*tritongpu-pipeline"):
        check_request(ReplayRequest(str(SAMPLES), cap.id, without=("tritongpu-pipelin",)), cap)
    # a pass of the TTGIR pipeline is not one a replay from TTGIR runs
    with pytest.raises(IrscopeError, match="--from ttgir can leave out"):
        check_request(ReplayRequest(str(SAMPLES), cap.id, "ttgir", without=("tritongpu-pipeline",)), cap)


def test_bad_sets_are_one_line_errors():
    cap = _cap(*MATMUL)
    with pytest.raises(IrscopeError, match="BLOCK_SIZE_M is a constexpr"):
        check_request(ReplayRequest(str(SAMPLES), cap.id, sets=(("BLOCK_SIZE_M", "32"),)), cap)
    with pytest.raises(IrscopeError, match=r"'num_stage' is not a compile option.*num_stages"):
        check_request(ReplayRequest(str(SAMPLES), cap.id, sets=(("num_stage", "2"),)), cap)
    with pytest.raises(IrscopeError, match=r"--set num_stages=1.5: expected an integer \(captured: num_stages=5\)"):
        check_request(ReplayRequest(str(SAMPLES), cap.id, sets=(("num_stages", "1.5"),)), cap)
    with pytest.raises(IrscopeError, match="expected true or false"):
        check_request(ReplayRequest(str(SAMPLES), cap.id, sets=(("enable_fp_fusion", "2"),)), cap)
    # options only the frontend reads are in the captured IR already: setting one would change nothing
    for key in ("debug", "sanitize_overflow", "default_dot_input_precision", "max_num_imprecise_acc_default"):
        with pytest.raises(IrscopeError, match=rf"^{key} acts in the frontend .* the captured IR holds {key}="):
            check_request(ReplayRequest(str(SAMPLES), cap.id, sets=((key, "1"),)), cap)
    with pytest.raises(IrscopeError) as err:
        check_request(ReplayRequest(str(SAMPLES), cap.id, sets=(("num_stage", "2"),)), cap)
    assert "debug" not in str(err.value)  # not offered among the options a replay sets
    check_request(ReplayRequest(str(SAMPLES), cap.id, sets=(("maxnreg", "128"), ("enable_fp_fusion", "false"))), cap)
    with pytest.raises(IrscopeError, match="use --from ttir"):
        check_request(ReplayRequest(str(SAMPLES), cap.id, "ttgir", sets=(("num_stages", "2"),)), cap)
    with pytest.raises(IrscopeError, match="needs --from ttir"):
        check_request(ReplayRequest(str(SAMPLES), cap.id, "ttgir", target="sm_80"), cap)
    with pytest.raises(IrscopeError, match="expected KEY=VALUE"):
        parse_set("num_stages")
    assert parse_set(" num_stages = 2 ") == ("num_stages", "2")
    assert [option_value(v) for v in ("2", "1.5", "true", "ieee")] == [2, 1.5, True, "ieee"]


def test_cli_bad_input_is_one_line_and_writes_nothing(tmp_path):
    out = tmp_path / "r.irscope"
    for args, want in (((f"--without-pass", "nope"), "unknown pass 'nope'"),
                       (("--set", "BLOCK_SIZE_M=32"), "is a constexpr"),
                       (("--from", "ttgir", "--target", "sm_80"), "needs --from ttir")):
        p = run_cli("replay", SAMPLES, "#5", *args, "-o", out)
        assert p.returncode == 1, p.stderr
        assert p.stderr.count("\n") == 1 and p.stderr.startswith("irscope: error:") and want in p.stderr
        assert "Traceback" not in p.stderr and not out.exists()


@pytest.mark.slow
def test_older_triton_says_it_has_no_stage_hook(tmp_path):
    py = VENVS / "triton-3.2" / "bin" / "python"
    if not py.exists():
        pytest.fail(f"{py} is missing: run scripts/setup.sh")
    out = tmp_path / "r.irscope"
    p = run_cli("replay", SAMPLES, "#5", "--without-pass", "tritongpu-prefetch", "--python", py, "-o", out)
    assert p.returncode == 1
    assert p.stderr.count("\n") == 1
    assert re.search(r"Triton 3\.2\.\d has no stage hook .*3\.6 and later", p.stderr), p.stderr
    assert not out.exists()  # nothing ran: no bundle, no empty run


@pytest.mark.slow
def test_a_triton_that_cannot_read_the_ir_is_one_line(tmp_path):
    py = VENVS / "triton-3.0" / "bin" / "python"
    if not py.exists():
        pytest.fail(f"{py} is missing: run scripts/setup.sh")
    out = tmp_path / "r.irscope"
    p = run_cli("replay", SAMPLES, "#5", "--from", "ttgir", "--python", py, "-o", out)
    assert p.returncode == 1 and p.stderr.count("\n") == 1 and not p.stdout.strip()
    assert re.search(r"Triton 3\.0\.\d \(--python .*\) cannot read this ttgir IR: ", p.stderr), p.stderr
    assert not out.exists()


@pytest.mark.slow
def test_cli_json_and_a_replay_from_ttgir(tmp_path):
    out = tmp_path / "r.irscope"
    p = run_cli("replay", SAMPLES, "matmul_kernel", "--variant", "num_warps=2", "--from", "ttgir", "--json",
                "-o", out, check=True)
    data = json.loads(p.stdout)
    assert data["ok"] and data["from"] == "ttgir" and data["capture_id"] == 5 and data["replay_id"] == 1
    assert data["diff"] == f"irscope diff {SAMPLES}:#5 {out}:#1"
    with irscope.open(str(out)) as rep:
        cap = rep.capture("#1")
        # from TTGIR only the LLVM lowering runs: the same TTGIR in, the same LLVM IR,
        # PTX and registers out
        assert {p.row.stage for p in cap.passes()} <= {LLIR, PTX, "cubin"}
        assert compile_differences(_cap(*MATMUL), cap, stages=(LLIR, PTX)) == []


@pytest.mark.slow
def test_maxnreg_from_ttgir_reaches_the_lowering(tmp_path):
    """The TTGIR pipeline writes maxnreg into the module (``ttg.maxnreg``) and the LLVM
    lowering reads it there: a replay from TTGIR writes it into the IR it compiles."""
    out = tmp_path / "r.irscope"
    run_cli("replay", SAMPLES, f"#{MATMUL[1]}", "--from", "ttgir", "--set", "maxnreg=40", "-o", out, "-q", check=True)
    with irscope.open(str(out)) as rep:
        cap = rep.capture("#1")
        assert "ttg.maxnreg = 40 : i32" in cap.stage(TTGIR).text and ".maxnreg 40" in cap.stage(PTX).text
        assert cap.resources.registers <= 40 < _cap(*MATMUL).resources.registers


def test_a_replay_by_another_triton_says_so():
    req = ReplayRequest("b", 1)
    assert ReplayOutcome(req, 1, True, triton="3.6.0", original_triton="3.6.0").version_note() is None
    assert ReplayOutcome(req, 1, True, triton="3.6.0").version_note() is None  # an older bundle: not known
    note = ReplayOutcome(req, 1, True, triton="3.6.0", original_triton="3.9.0").version_note()
    assert note is not None and note.startswith("the original was compiled with Triton 3.9.0, this replay with 3.6.0")


def test_replays_are_dealt_to_children_one_python_each():
    reqs = [ReplayRequest("b", 1, python=py) for py in (None, None, None, "old", None, "old")]
    assert _chunks(reqs, 1) == [[0, 1, 2, 4], [3, 5]]
    assert _chunks(reqs, 2) == [[0, 2], [1, 4], [3], [5]]
    assert _chunks(reqs, 8) == [[0], [1], [2], [4], [3], [5]]
    assert ReplayRequest("b", 1, "ttir", (("num_stages", "2"),), "sm_80", ("tritongpu-pipeline",)).label() == \
        "from ttir, num_stages=2, target sm_80, -tritongpu-pipeline"


@pytest.mark.slow
def test_a_newer_triton_leaves_the_pass_out(tmp_path):
    """Triton 3.9 also asks the stage hook for a cache key (called with no arguments)."""
    py = VENVS / "triton-3.9" / "bin" / "python"
    if not py.exists():
        pytest.fail(f"{py} is missing: run scripts/setup.sh")
    out = tmp_path / "r.irscope"
    p = run_cli("replay", SAMPLES, "#5", "--without-pass", "tritongpu-pipeline", "--python", py, "--json",
                "-o", out, check=True)
    data = json.loads(p.stdout)
    assert data["ok"] and data["dropped"] == ["tritongpu-pipeline"]
    assert data["triton"].startswith("3.9") and data["original_triton"] == _cap(*MATMUL).triton_version
    with irscope.open(str(out)) as rep:
        cap = rep.capture(f"#{data['replay_id']}")
        assert cap.triton_version.startswith("3.9") and ASYNC_COPY not in cap.stage(TTGIR).text
        # the replay says that another Triton made it: not every difference is the pass's
        assert any(n.startswith(f"the original was compiled with Triton {data['original_triton']}, this replay "
                                f"with {data['triton']}") for n in cap.notes)
        assert "tritongpu-pipeline" not in [p.row.argument for p in cap.passes(TTGIR)]
