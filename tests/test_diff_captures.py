"""Capture-level deltas of ``irscope diff``: metadata and resources, the PTX/SASS
instruction mix, the pass pipeline, per-Python-line op counts, pairing two
bundles, and the version matrix.

The quick tests read the fixture bundle (Triton 3.6, sm_90: add_kernel, four
matmul autotune configs, the helper-call kernel); the counts asserted were
checked once by hand against ``irscope cat ... --stage ptx|sass`` and grep.
The slow test pairs Triton 3.6 and 3.9 captures of the session's shared samples bundle.
"""

from types import SimpleNamespace

import pytest
from conftest import DATA

import irscope
from irscope.core.pass_steps import StepCounts
from irscope.diff.lines import line_counts, line_deltas, line_note
from irscope.diff.matrix import group_by, matrix, pick_sides
from irscope.diff.metadata import FieldDelta, field_delta, metadata_delta
from irscope.diff.mix import (
    CLASSES,
    capture_mix,
    classify,
    instruction_mix,
    mix_delta,
    ops_per_stage,
)
from irscope.diff.pairing import pair_captures, summarise_pair
from irscope.diff.pipeline import pipeline_delta
from irscope.errors import IrscopeError

FIXTURE = DATA / "samples_sm90.irscope"


@pytest.fixture(scope="module")
def caps():
    with irscope.open(FIXTURE) as b:
        caps = b.captures()
        # add_kernel, matmul x4 (128x256x64 w8 s3, 128x128x32 w4 s4, 64x128x32 w4 s4, 64x32x32 w2 s5), helper
        assert [c.kernel for c in caps] == ["add_kernel"] + ["matmul_kernel"] * 4 + ["bias_gelu_rowsum_kernel"]
        yield SimpleNamespace(va=caps[0], mm=caps[1:5], helper=caps[5], all=caps)


# -- metadata and resources ------------------------------------------------------

def _changed(deltas):
    return {d.name: (d.before, d.after) for d in deltas if d.changed}


def test_metadata_of_two_autotune_configs(caps):
    deltas = metadata_delta(caps.mm[0], caps.mm[1])
    changed = _changed(deltas)
    assert changed["num_warps"] == (8, 4)
    assert changed["num_stages"] == (3, 4)
    assert changed["constexprs.BLOCK_SIZE_N"] == (256, 128)
    assert changed["constexprs.BLOCK_SIZE_K"] == (64, 32)
    assert changed["registers"] == (207, 174)
    assert changed["shared"] == (147456, 65536)  # 144 KiB -> 64 KiB, as irscope ls prints
    assert changed["occupancy.blocks_per_sm"] == (1, 2)
    # Unchanged fields are listed too, in report order.
    names = [d.name for d in deltas]
    assert names[:6] == ["triton_version", "target", "num_warps", "num_stages", "num_ctas", "maxnreg"]
    assert "constexprs.BLOCK_SIZE_M" in names and "constexprs.BLOCK_SIZE_M" not in changed
    assert names[-1] == "compile_seconds"
    regs = next(d for d in deltas if d.name == "registers")
    assert (regs.delta, regs.ratio, regs.group) == (-33, 0.8406, "resources")
    assert regs.to_json() == {"name": "registers", "group": "resources", "before": 207, "after": 174,
                              "changed": True, "delta": -33, "ratio": 0.8406}


def test_metadata_of_a_capture_and_itself_is_all_zero(caps):
    deltas = metadata_delta(caps.va, caps.va)
    assert deltas and not _changed(deltas)
    assert all(d.delta in (0, None) for d in deltas)


def test_field_delta_numbers():
    assert field_delta("x", 0, 5).ratio is None  # no ratio from zero
    assert field_delta("x", None, 5).delta is None
    assert field_delta("x", True, False).delta is None  # bools are not numbers
    assert not field_delta("x", 1.0000001, 1.0000002).changed
    assert isinstance(field_delta("x", "a", "b"), FieldDelta) and field_delta("x", "a", "b").changed


# -- instruction mix -------------------------------------------------------------

@pytest.mark.parametrize("opcode, stage, cls", [
    # spellings from the samples' PTX (sm_80 and sm_90)
    ("ld.global.v4.b32", "ptx", "global_load"), ("ld.global.b16", "ptx", "global_load"),
    ("st.global.v4.b32", "ptx", "global_store"), ("ld.shared.v2.b64", "ptx", "shared_load"),
    ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "ptx", "shared_load"),
    ("st.shared.v4.b32", "ptx", "shared_store"), ("stmatrix.sync.aligned.m8n8.x4.shared.b16", "ptx", "shared_store"),
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "ptx", "mma"),
    ("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", "ptx", "mma"),
    ("wgmma.fence.sync.aligned", "ptx", "barrier"), ("wgmma.wait_group.sync.aligned", "ptx", "barrier"),
    ("cp.async.cg.shared.global", "ptx", "async_copy_tma"), ("cp.async.commit_group", "ptx", "barrier"),
    ("cp.async.wait_group", "ptx", "barrier"), ("bar.sync", "ptx", "barrier"),
    ("fence.proxy.async.shared::cta", "ptx", "barrier"), ("atom.global.gpu.acq_rel.add.u32", "ptx", "atomic"),
    ("cvt.rn.f16x2.f32", "ptx", "conversion"), ("bra.uni", "ptx", "control_flow"), ("ret", "ptx", "control_flow"),
    ("ld.param.b64", "ptx", "other"), ("mov.b32", "ptx", "other"), ("fma.rn.f32", "ptx", "other"),
    # PTX ISA spellings the samples do not reach (TMA, mbarrier, tcgen05, spills)
    ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes", "ptx", "async_copy_tma"),
    ("cp.async.bulk.commit_group", "ptx", "barrier"), ("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add",
                                                       "ptx", "async_copy_tma"),
    ("mbarrier.try_wait.parity.shared::cta.b64", "ptx", "barrier"), ("ld.shared::cta.b32", "ptx", "shared_load"),
    ("tcgen05.mma.cta_group::1.kind::f16", "ptx", "mma"), ("tcgen05.wait::ld.sync.aligned", "ptx", "barrier"),
    ("tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64", "ptx", "barrier"),
    ("tcgen05.ld.sync.aligned.32x32b.x32.b32", "ptx", "other"), ("ld.local.b32", "ptx", "local"),
    ("st.local.v4.b32", "ptx", "local"), ("red.global.add.f32", "ptx", "atomic"),
    ("ld.global.nc.v4.b32", "ptx", "global_load"), ("ld.relaxed.gpu.global.b32", "ptx", "global_load"),
    ("cvta.to.global.u64", "ptx", "other"),
    # spellings from the samples' SASS (sm_80 and sm_90)
    ("LDG.E.128", "sass", "global_load"), ("STG.E.U16", "sass", "global_store"), ("LDS.U8", "sass", "shared_load"),
    ("LDSM.16.MT88.4", "sass", "shared_load"), ("STS.128", "sass", "shared_store"),
    ("STSM.16.M88.4", "sass", "shared_store"), ("HMMA.16816.F32", "sass", "mma"),
    ("HGMMA.64x256x16.F32", "sass", "mma"), ("HFMA2.MMA", "sass", "other"),
    ("LDGSTS.E.BYPASS.128", "sass", "async_copy_tma"), ("LDGDEPBAR", "sass", "barrier"),
    ("DEPBAR.LE", "sass", "barrier"), ("BAR.SYNC.DEFER_BLOCKING", "sass", "barrier"),
    ("WARPGROUP.ARRIVE", "sass", "barrier"), ("MEMBAR.ALL.GPU", "sass", "barrier"),
    ("FENCE.VIEW.ASYNC.S", "sass", "barrier"), ("ATOMG.E.ADD.STRONG.GPU", "sass", "atomic"),
    ("F2FP.F16.F32.PACK_AB", "sass", "conversion"), ("I2FP.F32.S32", "sass", "conversion"),
    ("F2I.FTZ.U32.TRUNC.NTZ", "sass", "conversion"), ("BRA", "sass", "control_flow"),
    ("BSSY", "sass", "control_flow"), ("CALL.REL.NOINC", "sass", "control_flow"),
    ("EXIT", "sass", "control_flow"), ("IMAD.WIDE.U32", "sass", "other"), ("LDC.64", "sass", "other"),
    # SASS the samples do not reach
    ("UTMALDG.2D", "sass", "async_copy_tma"), ("UTMASTG.2D", "sass", "async_copy_tma"),
    ("UBLKCP.S.G", "sass", "async_copy_tma"), ("SYNCS.ARRIVE.TRANS64.RED.A1T0", "sass", "barrier"),
    ("UTCHMMA", "sass", "mma"), ("IMMA.16832.S8.S8", "sass", "mma"), ("LDL.LU", "sass", "local"),
    ("STL.128", "sass", "local"), ("RED.E.ADD.F32.FTZ.RN.STRONG.GPU", "sass", "atomic"),
])
def test_classify(opcode, stage, cls):
    assert classify(opcode, stage) == cls


def test_classify_rejects_other_stages():
    with pytest.raises(IrscopeError):
        classify("load", "llir")


def test_vector_add_mix(caps):
    # 4 ld.global.v4.b32 / 2 st.global.v4.b32 in PTX; 4 LDG.E.128 / 2 STG.E.128 in SASS.
    ptx, sass = capture_mix(caps.va, "ptx"), capture_mix(caps.va, "sass")
    assert (ptx.count("global_load"), ptx.count("global_store"), ptx.count("mma")) == (4, 2, 0)
    assert ptx.opcodes["ld.global.v4.b32"] == 4 and ptx.count("control_flow") == 1  # ret
    assert (sass.count("global_load"), sass.count("global_store")) == (4, 2)
    assert sass.opcodes["LDG.E.128"] == 4 and sass.opcodes["STG.E.128"] == 2
    assert list(ptx.classes) == list(CLASSES) and ptx.total == 51 and ptx.unknown == 0


def test_sm90_matmul_mix(caps):
    # Config 0 (128x256x64, 8 warps): counted by hand with grep on irscope cat.
    ptx = capture_mix(caps.mm[0], "ptx")
    assert ptx.count("mma") == 4 and ptx.opcodes["wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16"] == 4
    assert ptx.count("async_copy_tma") == 36  # cp.async.cg.shared.global
    assert ptx.count("shared_load") == 16  # ldmatrix
    assert (ptx.count("shared_store"), ptx.count("global_store")) == (16, 16)
    # 7 bar.sync + 6 cp.async.commit_group + 2 cp.async.wait_group + wgmma fence, commit, 2 waits
    assert ptx.count("barrier") == 19
    sass = capture_mix(caps.mm[0], "sass")
    assert sass.count("mma") == 4 and sass.opcodes_of("mma") == {"HGMMA.64x256x16.F32": 4}
    assert sass.count("async_copy_tma") == 36  # LDGSTS.E.BYPASS.128
    assert sass.count("shared_load") == 25  # 16 LDSM.16.M88.4 + 9 LDS
    # 7 BAR.SYNC + 6 LDGDEPBAR + 2 DEPBAR.LE + WARPGROUP.ARRIVE + 2 WARPGROUP.DEPBAR.LE
    assert sass.count("barrier") == 18
    assert sass.count("local") == 0  # no spills (ptxas: 0 bytes)


def test_mix_delta(caps):
    a, b = capture_mix(caps.mm[0], "sass"), capture_mix(caps.mm[1], "sass")
    d = mix_delta(a, b)
    by = {c.name: c for c in d.classes}
    assert (by["async_copy_tma"].before, by["async_copy_tma"].after) == (36, 32)
    assert (by["mma"].before, by["mma"].after) == (4, 4)
    assert {c.name for c in d.changed_classes()} >= {"async_copy_tma", "barrier", "shared_load"}
    assert d.total.delta == b.total - a.total and not d.identical
    assert mix_delta(a, a).identical and not mix_delta(a, a).changed_classes()
    with pytest.raises(IrscopeError):
        mix_delta(a, capture_mix(caps.mm[0], "ptx"))
    assert d.to_json()["stage"] == "sass"


def test_instruction_mix_of_plain_text():
    ptx = irscope.parse_text(".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
                             "\tld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1];\n\tst.local.b32 [%rd2], %r1;\n"
                             "\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r5], %r6;\n\tret;\n}\n", "ptx").module
    mix = instruction_mix(ptx)
    assert (mix.count("global_load"), mix.count("local"), mix.count("barrier"), mix.count("control_flow")) == \
        (1, 1, 1, 1)


# -- pass pipeline ---------------------------------------------------------------

def test_pipeline_of_a_capture_and_itself_is_empty(caps):
    passes = caps.mm[0].passes()
    d = pipeline_delta(passes, passes)
    assert d.identical and [s.stage for s in d.stages] == ["ttir", "ttgir", "llir"]
    assert all(s.passes_before == s.passes_after and s.identical for s in d.stages)


def test_pipeline_of_two_configs(caps):
    # Config 0 runs seven ttir Canonicalizers, config 3 six (one before
    # TritonRewriteTensorPointer fewer): that one is removed, nothing is reordered.
    d = pipeline_delta(caps.mm[0].passes(), caps.mm[3].passes())
    ttir = d.stage("ttir")
    assert (ttir.passes_before, ttir.passes_after) == (14, 13)
    assert [(p.name, p.occurrence, p.index) for p in ttir.removed] == [("Canonicalizer", 5, 6)]
    assert ttir.added == () and ttir.reordered == () and ttir.renamed == ()
    ttgir = d.stage("ttgir")
    assert ttgir.same_pipeline and ttgir.effect_changed  # same 42 passes, different effects
    # The pipeliner does different work for other block sizes and stage counts.
    pipe = next(e for e in ttgir.effect_changed if e.argument == "tritongpu-pipeline")
    assert pipe.before.added != pipe.after.added and not pipe.flipped
    assert d.stage("llir").same_pipeline and not d.identical
    assert d.to_json()["stages"][0]["removed"][0]["name"] == "Canonicalizer"


def _fake_passes(spec, stage="ttgir"):
    """Pass-like objects from "Name" or "Name:changed" strings."""
    out = []
    for i, s in enumerate(spec):
        name, _, changed = s.partition(":")
        counts = StepCounts(added=int(changed or 0))
        step = SimpleNamespace(changed=bool(changed), counts=counts)
        out.append(SimpleNamespace(stage=stage, name=name, argument=name.lower(), index=i, step=step))
    return out


def test_pipeline_reorder_insert_and_effect():
    a = _fake_passes(["C", "C", "R", "C", "X", "Y:1", "Z"])
    b = _fake_passes(["C", "R", "C", "Y", "X", "Z", "N"])
    s = pipeline_delta(a, b).stage("ttgir")
    assert [(p.name, p.index) for p in s.removed] == [("C", 1)]  # aligned: one C went, none moved past R
    assert [p.name for p in s.added] == ["N"]
    assert [(p.name, p.index_before, p.index_after) for p in s.reordered] == [("X", 4, 4)]
    assert [(e.name, e.flipped) for e in s.effect_changed] == [("Y", True)]


def test_pipeline_pairs_by_argument_across_renames():
    a = _fake_passes(["CSE", "Canonicalizer"])
    b = [SimpleNamespace(**{**vars(p), "name": p.name + "Pass"}) for p in _fake_passes(["CSE", "Canonicalizer"])]
    s = pipeline_delta(a, b).stage("ttgir")
    assert s.same_pipeline and s.renamed == (("CSE", "CSEPass"), ("Canonicalizer", "CanonicalizerPass"))


def test_long_pipelines_align_and_report_the_move():
    names = [f"P{i % 7}" for i in range(600)]  # 600 x 600 would be 360,000 LCS cells
    s = pipeline_delta(_fake_passes(names + ["Q"]), _fake_passes(["Q"] + names)).stage("ttgir")
    assert not s.added and not s.removed and [p.name for p in s.reordered] == ["Q"]


# -- per-Python-line deltas ------------------------------------------------------

def test_line_deltas_of_two_configs(caps):
    a, b = caps.mm[0], caps.mm[3]
    deltas = line_deltas(a, b)
    by = {d.line: d for d in deltas}
    # Line 67 is the tl.dot: 4 HGMMA in both, but the 128x256 tile lowers to far more LLVM IR.
    dot = by[67]
    assert "tl.dot" in dot.text and dot.text_before is None
    assert dot.count("ttir").changed is False and dot.count("llir").before > dot.count("llir").after
    # Counts come from the one rule of irscope.ir.python_lines (ops_at_line agrees).
    assert dot.count("sass").before == len(a.ops_at_line(67)["sass"])
    assert dot.count("sass").after == len(b.ops_at_line(67)["sass"])
    assert all(d.changed_stages for d in deltas)
    assert [d.line for d in deltas] == sorted(by)
    assert line_note(a, b) is None
    assert dot.to_json()["counts"]["sass"]["before"] == dot.count("sass").before


def test_line_deltas_of_a_capture_and_itself_are_empty(caps):
    assert line_deltas(caps.va, caps.va) == []
    assert sum(line_counts(caps.va, "ttir").values()) <= ops_per_stage(caps.va)["ttir"]


def test_line_deltas_across_two_files_say_lines_are_by_number(caps):
    note = line_note(caps.va, caps.mm[0])
    assert note and "by number" in note
    deltas = line_deltas(caps.va, caps.mm[0], stages=("ttir",))
    assert deltas and all(len(d.counts) == 1 for d in deltas)


# -- pairing ---------------------------------------------------------------------

def _fake(id, kernel, target="sm_90", warps=4, stages=3, **cx):
    return SimpleNamespace(id=id, kernel=kernel, target=target, constexprs=cx, metadata={},
                           options={"num_warps": warps, "num_stages": stages}, variant=f"v{id}")


def test_pairing_rules():
    a = [_fake(1, "add", BLOCK=1024), _fake(2, "mm", BM=128, stride=1), _fake(3, "mm", BM=64, stride=1),
         _fake(4, "old_name"), _fake(5, "mm", target="sm_80", BM=128)]
    b = [_fake(11, "mm", BM=64), _fake(12, "mm", BM=128), _fake(13, "mm", BM=32), _fake(14, "add", BLOCK=2048),
         _fake(15, "new_name")]
    p = pair_captures(a, b)
    # mm configs pair field by field (b lacks the stride constexpr: only shared fields count);
    # add_kernel compiled once on each side pairs although BLOCK changed, and says so.
    assert [(x.a.id, x.b.id, x.differs) for x in p.pairs] == [
        (1, 14, ("constexprs.BLOCK",)), (2, 12, ()), (3, 11, ())]
    assert [c.id for c in p.only_a] == [4, 5]  # renamed kernel; sm_80 has no counterpart
    assert [c.id for c in p.only_b] == [13, 15]  # an added config; the renamed kernel
    assert p.to_json()["pairs"][0]["differs"] == ["constexprs.BLOCK"]


def test_pairing_a_bundle_with_itself(caps):
    p = pair_captures(caps.all, caps.all)
    assert [(x.a.id, x.b.id) for x in p.pairs] == [(c.id, c.id) for c in caps.all]
    assert p.only_a == () and p.only_b == () and all(x.exact for x in p.pairs)
    s = summarise_pair(p.pairs[0])
    assert s.kernel == "add_kernel" and not s.changed
    assert {c.name for c in s.instructions} >= {"ptx.global_load", "sass.global_store"}


def test_pair_summary_of_two_configs(caps):
    # One capture of the kernel on each side: paired although the config differs.
    p = pair_captures([caps.mm[0]], [caps.mm[1]])
    assert p.pairs[0].differs == ("num_warps", "num_stages", "constexprs.BLOCK_SIZE_N", "constexprs.BLOCK_SIZE_K")
    # Two configs on one side: only the one that agrees field by field pairs.
    p2 = pair_captures([caps.mm[0], caps.mm[2]], [caps.mm[1]])
    assert p2.pairs == () and len(p2.only_a) == 2 and len(p2.only_b) == 1
    s = summarise_pair(p.pairs[0])
    assert (s.registers.before, s.registers.after) == (207, 174)
    assert (s.occupancy.before, s.occupancy.after) == ("1x8w regs", "2x4w regs")
    assert [c.name for c in s.ops] == ["ttir", "ttgir", "llir", "ptx", "sass"]
    mma = next(c for c in s.instructions if c.name == "sass.mma")
    assert (mma.before, mma.after) == (4, 4) and s.changed
    assert s.to_json()["shared"]["after"] == 65536


# -- matrix ----------------------------------------------------------------------

def test_matrix_and_group_by(caps):
    m = matrix([("w8", caps.mm[0]), ("w4", caps.mm[1]), ("w2", caps.mm[3])])
    assert m.labels == ("w8", "w4", "w2")
    rows = {r.name: r for r in m.rows()}
    assert rows["registers"].values == (207, 174, 96) and rows["registers"].varies
    assert rows["sass.mma"].values == (4, 4, 16)  # 64x32 tile: 16 smaller HGMMAs
    assert rows["target"].values == ("sm_90",) * 3 and not rows["target"].varies
    assert "ptx.local" not in rows  # no side uses it
    assert all(r.varies for r in m.rows(varying_only=True))
    assert m.sides[0].figure("ops.ttgir") == ops_per_stage(caps.mm[0])["ttgir"]
    assert m.to_json()["sides"][2]["limited_by"] == "shared"
    with pytest.raises(IrscopeError):
        matrix([("x", caps.va), ("x", caps.va)])
    groups = group_by(caps.all, "triton_version")
    assert list(groups) == ["3.6.0"] and len(groups["3.6.0"]) == 6
    assert list(group_by(caps.all, "target")) == ["sm_90"]
    assert pick_sides(groups, caps.mm[2]) == [("3.6.0", caps.mm[2])]
    with pytest.raises(IrscopeError):
        group_by(caps.all, "kernel")


def test_group_by_orders_labels_naturally():
    caps = [SimpleNamespace(triton_version=v, target=t)
            for v, t in (("3.10.0", "sm_100"), ("3.2.0", "sm_90"), ("3.9.0", "sm_80"), ("3.2.0", "sm_90a"))]
    assert list(group_by(caps, "triton_version")) == ["3.2.0", "3.9.0", "3.10.0"]
    assert list(group_by(caps, "target")) == ["sm_80", "sm_90", "sm_90a", "sm_100"]


# -- two Tritons' real captures (slow) --------------------------------------------

@pytest.fixture(scope="module")
def two_bundles(version_samples):
    """From the session's shared capture of the samples: Triton 3.6 (vector_add on sm_90;
    matmul_autotune on sm_80 and sm_90) and Triton 3.9 (both on sm_90), in that order."""
    def pick(caps, version, kernel, target):
        return [c for c in caps if (c.triton_version, c.kernel, c.target) == (version, kernel, target)]

    with irscope.open(version_samples) as b:
        caps = b.captures()
        yield (pick(caps, "3.6.0", "add_kernel", "sm_90") + pick(caps, "3.6.0", "matmul_kernel", "sm_80")
               + pick(caps, "3.6.0", "matmul_kernel", "sm_90"),
               pick(caps, "3.9.0", "add_kernel", "sm_90") + pick(caps, "3.9.0", "matmul_kernel", "sm_90"))


@pytest.mark.slow
def test_pairing_two_triton_versions(two_bundles):
    a, b = two_bundles
    assert {c.triton_version for c in a} == {"3.6.0"} and {c.triton_version for c in b} == {"3.9.0"}
    p = pair_captures(a, b)
    paired = [(x.a.kernel, x.a.target, x.a.variant == x.b.variant, x.exact) for x in p.pairs]
    assert paired == [("add_kernel", "sm_90", True, True)] + [("matmul_kernel", "sm_90", True, True)] * 4
    assert [(c.kernel, c.target) for c in p.only_a] == [("matmul_kernel", "sm_80")] * 4
    assert p.only_b == ()
    # sm_80 lowers tl.dot to mma.sync / HMMA, sm_90 to wgmma / HGMMA.
    sm80 = p.only_a[0]
    assert set(capture_mix(sm80, "sass").opcodes_of("mma")) == {"HMMA.16816.F32"}
    assert all(o.startswith("mma.sync") for o in capture_mix(sm80, "ptx").opcodes_of("mma"))
    for pair in p.pairs:
        s = summarise_pair(pair)
        assert s.registers.before and s.registers.after
        meta = {d.name: d for d in metadata_delta(pair.a, pair.b)}
        assert meta["triton_version"].changed and not meta["num_warps"].changed
        # One pipeline, renamed passes paired by argument (CSE -> CSEPass in 3.9).
        pd = pipeline_delta(pair.a.passes(), pair.b.passes())
        assert any(s.renamed for s in pd.stages)
        assert line_note(pair.a, pair.b) is None
    # Three sides: 3.6 sm_80, 3.6 sm_90, 3.9 sm_90 of one config.
    like = p.pairs[1].a
    sides = pick_sides(group_by(a, "target"), like) + [("3.9", p.pairs[1].b)]
    assert [label for label, _ in sides] == ["sm_80", "sm_90", "3.9"]
    rows = {r.name: r for r in matrix(sides).rows()}
    assert rows["target"].values == ("sm_80", "sm_90", "sm_90")


@pytest.mark.slow
def test_pairs_compared_in_worker_processes_equal_one_process(two_bundles):
    """``irscope diff A B`` spreads the pairs over processes: same results, same order."""
    from irscope.diff.bundles import compare_pairs

    a, b = two_bundles
    pairs = list(pair_captures(a, b).pairs)
    serial = compare_pairs(pairs, jobs=1)
    parallel = compare_pairs(pairs, jobs=3)
    assert [(r.to_json(), c) for r, c in parallel] == [(r.to_json(), c) for r, c in serial]
    assert [r.kernel for r, _ in serial] == ["add_kernel"] + ["matmul_kernel"] * 4
    assert all(c["llir"] > 0 for _, c in serial[1:])  # 3.6 -> 3.9 changed the matmul's LLVM IR
