"""The hints of ``irscope explain`` (irscope/core/hints.py), on real captures: each rule
where it fires and where it must not, and on every capture of every bundle under
tests/data every hint's evidence checked against the capture it cites (the stage line it
quotes, the remark Triton emitted, the SASS count)."""

import json
import re

import pytest

import irscope
from irscope.compiler.stages import SASS
from conftest import DATA, irscope as run_irscope

WHY = DATA / "why_sm90_sm80.irscope"
LOOPS = DATA / "why_loops.irscope"
TARGETS = ("sm_90", "sm_80")
GATHER_LOAD, GATHER_STORE = 16, 17  # tests/kernels/why_gather.py
COPY_LOAD, COPY_STORE = 24, 25
GEMM_LOOP, ROWSUM_LOOP, RANGED_LOOP, STRIDED_LOOP = 41, 85, 95, 105  # tests/kernels/why_loops.py


def _hints(cap, rule, line=None):
    return [h for h in cap.explain().hints if h.rule == rule and (line is None or h.line == line)]


@pytest.fixture(scope="module")
def why():
    with irscope.open(WHY) as b:
        yield b


@pytest.fixture(scope="module")
def loops():
    with irscope.open(LOOPS) as b:
        yield b


@pytest.mark.parametrize("target", TARGETS)
def test_narrow_access_names_the_stride_on_the_gather(why, target):
    cap = why.capture("gather_kernel", target=target)
    (h,) = _hints(cap, "narrow-access")
    assert h.line == GATHER_LOAD
    assert "16 bits wide where 128 would fit" in h.text and "`stride`" in h.text
    texts = [e.text for e in h.evidence]
    assert any(re.search(r"^ptx line \d+: ld\.global\.b16 ", t) for t in texts)
    assert any("%stride: i32" in t and "ttir" in t for t in texts)
    assert any(t.startswith("remark") and "vectorization fails" in t for t in texts)


@pytest.mark.parametrize("target", TARGETS)
def test_no_narrow_access_on_the_contiguous_copy(why, target):
    cap = why.capture("copy_kernel", target=target)
    assert _hints(cap, "narrow-access") == []


@pytest.mark.parametrize("target", TARGETS)
def test_vectorised_by_specialisation_on_the_copy(why, target):
    cap = why.capture("copy_kernel", target=target)
    (h,) = _hints(cap, "vectorised-by-specialisation", COPY_LOAD)
    assert "`src_ptr`" in h.text and "`n`" in h.text and "128 bits" in h.text
    quotes = [e.quote for e in h.evidence]
    assert "%src_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}" in quotes
    assert "%n: i32 {tt.divisibility = 16 : i32}" in quotes


@pytest.mark.parametrize("target", TARGETS)
def test_not_vectorised_by_specialisation_on_the_gather_load(why, target):
    cap = why.capture("gather_kernel", target=target)
    assert _hints(cap, "vectorised-by-specialisation", GATHER_LOAD) == []
    assert len(_hints(cap, "vectorised-by-specialisation", GATHER_STORE)) == 1  # its store is contiguous


@pytest.mark.parametrize("target", TARGETS)
def test_spills_hint_sizes_the_accumulator(why, target):
    cap = why.capture("big_tile_gemm_kernel", target=target)
    (h,) = _hints(cap, "spills")
    ex = cap.explain()
    assert ex.total_spills > 0 and h.text.startswith(f"{ex.total_spills} spill instructions")
    assert "128x256 f32 accumulator needs 256 registers per thread at num_warps=4" in h.text
    assert any(e.stage == "ttgir" and "128x256xf32" in (e.quote or "") for e in h.evidence)


def test_no_spills_hint_without_spills(why):
    for cap in why.captures():
        if cap.explain().total_spills == 0:
            assert _hints(cap, "spills") == []


@pytest.mark.parametrize("target", TARGETS)
def test_loop_not_pipelined(loops, target):
    caps = {(c.kernel, c.num_stages): c for c in loops.captures() if c.target == target}
    (one,) = _hints(caps[("gemm_kernel", 1)], "loop-not-pipelined")
    assert one.line == GEMM_LOOP and "num_stages=1" in one.text
    (rowsum,) = [h for c in loops.captures() if c.target == target and c.kernel == "rowsum_kernel"
                 for h in _hints(c, "loop-not-pipelined")]
    assert rowsum.line == ROWSUM_LOOP and "tl.range" in rowsum.text
    (strided,) = [h for c in loops.captures() if c.target == target and c.kernel == "strided_rowsum_kernel"
                  for h in _hints(c, "loop-not-pipelined")]
    assert strided.line == STRIDED_LOOP and "vectorization fails" in strided.text
    assert any(e.kind == "remark" for e in strided.evidence)


@pytest.mark.parametrize("target", TARGETS)
def test_no_loop_hint_on_pipelined_loops(loops, target):
    for cap in loops.captures():
        if cap.target != target:
            continue
        pipelined = {lp.line for lp in cap.explain().loops if lp.pipelined}
        assert not any(h.line in pipelined for h in _hints(cap, "loop-not-pipelined")), cap.title()
    ranged = next(c for c in loops.captures() if c.target == target and c.kernel == "ranged_rowsum_kernel")
    assert _hints(ranged, "loop-not-pipelined") == []


def _check_evidence(cap, h):
    ex = cap.explain()
    assert h.evidence, f"{cap.title()}: a hint without evidence: {h.text}"
    remarks = {r.text for r in cap.remarks()}
    for e in h.evidence:
        if e.stage is not None and e.stage_line is not None:
            lines = cap.stage(e.stage).text.splitlines()
            assert e.quote and e.quote in lines[e.stage_line - 1], (cap.title(), e.text)
        elif e.kind == "remark":
            assert any(r in e.text for r in remarks), (cap.title(), e.text)
        elif e.stage == SASS:
            n = sum(1 for ln in cap.stage(SASS).text.splitlines() if re.search(r"\b(LDL|STL)\b", ln))
            assert n == ex.total_spills and e.text.startswith(f"sass: {n} "), (cap.title(), e.text)
        elif e.text.startswith("ptxas:"):
            assert e.text == f"ptxas: {cap.resources.registers} registers per thread"
        elif e.text.startswith("num_stages ="):
            assert e.text == f"num_stages = {cap.num_stages}"
        else:
            assert e.kind == "resource" and "no dot" in e.text, (cap.title(), e.text)


def _bundles():
    return sorted(DATA.glob("*.irscope"))


@pytest.mark.parametrize("path", _bundles(), ids=lambda p: p.name)
def test_every_hint_cites_what_the_capture_holds(path):
    with irscope.open(path) as b:
        for cap in b.captures():
            if cap.failed:
                continue
            ex = cap.explain()
            assert ex.hints_computed
            narrow = {(ln.line) for ln in ex.lines for a in ln.global_accesses if a.narrow}
            unpipelined = {lp.line for lp in ex.loops if not lp.pipelined}
            for h in ex.hints:
                _check_evidence(cap, h)
                if h.rule == "narrow-access":
                    assert h.line in narrow
                elif h.rule == "vectorised-by-specialisation":
                    assert h.line not in narrow or any(not a.narrow for a in ex.line(h.line).global_accesses)
                elif h.rule == "spills":
                    assert ex.total_spills > 0
                elif h.rule == "loop-not-pipelined":
                    assert h.line in unpipelined
                    if "tl.range" in h.text:  # "not asked": the loop has no num_stages of its own
                        loop = next(e for e in h.evidence if e.stage == "ttgir")
                        op = next(o for o in cap.stage("ttgir").module.ops() if o.line == loop.stage_line)
                        assert op.name == "scf.for" and "tt.num_stages" not in op.attribute_values()


def test_samples_have_no_narrow_access_or_spill_hint():
    with irscope.open(DATA / "samples_sm90.irscope") as b:
        for cap in b.captures():
            rules = {h.rule for h in cap.explain().hints}
            assert not rules & {"narrow-access", "spills"}, cap.title()


def test_json_hints_keep_text_and_evidence():
    p = run_irscope("explain", WHY, "big_tile_gemm_kernel", "--target", "sm_90", "--json", check=True)
    out = json.loads(p.stdout)
    assert out["hints_computed"] is True and out["hints"]
    for h in out["hints"]:
        assert isinstance(h["text"], str) and h["evidence"]
        assert all(isinstance(e, str) for e in h["evidence"])
        assert h["rule"] in ("narrow-access", "vectorised-by-specialisation", "spills", "loop-not-pipelined")
    assert any(h["rule"] == "spills" for h in out["hints"])


def test_text_output_lists_the_hints():
    p = run_irscope("explain", WHY, "gather_kernel", "--target", "sm_80", check=True)
    assert "hints:" in p.stdout and "16 bits wide where 128 would fit" in p.stdout
    assert "not computed" not in p.stdout
