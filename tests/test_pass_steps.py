"""The pass step (irscope.core.pass_steps): one answer to "what did pass N change?",
read the same by every view: the core's list, ``irscope passes --json``,
``irscope diff BUNDLE:KERNEL --passes --json``, the report's timeline and the app's
stepper."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

import irscope
from conftest import DATA
from irscope.cli.main import main as cli_main
from irscope.compiler.pass_order import Side, nesting, place_steps
from irscope.core.pass_steps import StepCounts
from irscope.export.report.timeline import timeline
from irscope.irdiff.model import REMOVED
from irscope.link.provenance import module_scope
from irscope.compiler.records import CapturedKernel, PassRecord, Resources, RunInfo
from irscope.store.bundle import Bundle
from irscope.tui.screens.passes import step_view
from irscope.tui.widgets.pass_timeline import change_cell

BUNDLES = sorted(DATA.glob("*.irscope"))
LLIR = (DATA / "ir" / "3.6.0" / "add_sm90" / "add_kernel.llir").read_text()


def cli_json(*argv: str):
    """An ``irscope`` command's JSON output, run in this process."""
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli_main([str(a) for a in argv]) == 0
    return json.loads(out.getvalue())


def check_every_view_agrees(path: Path, capture_id: int) -> None:
    """Every pass of one capture has the same counts in every view."""
    passes_json = {p["index"]: p for p in cli_json("passes", path, f"#{capture_id}", "--json")}
    diff_json = {e["pass"]: e for e in cli_json("diff", f"{path}:#{capture_id}", "--passes", "--json")}
    with irscope.open(str(path)) as b:
        cap = b.capture(f"#{capture_id}")
        steps = cap.pass_steps()
        report = {t.index: t for t in timeline(cap)}
        assert len(steps) == len(passes_json) == len(report) == cap.pass_count
        for s in steps:
            c = s.counts
            want = (c.added, c.removed, c.changed, c.moved)
            p = passes_json[s.index]
            assert (p["added"], p["removed"], p["modified"], p["moved"]) == want, s
            assert (p["changed"], p["after_known"], p["depth"], p["parent"]) == (s.changed, s.after_known,
                                                                                 s.depth, s.parent)
            t = report[s.index]
            assert (t.added, t.removed, t.modified, t.moved, t.changed) == (*want, s.changed), s
            view = step_view(cap, s)
            if s.changed and s.after_known:
                d = diff_json[s.index]  # diff --passes lists exactly the passes that changed the IR
                assert d["index"] == s.index and d["name"] == s.name and d["stage"] == s.stage
                got = d["diff"]
                assert (got["added"], got["removed"], got["changed"], got["moved"]) == want, s
                assert t.diff is not None and StepCounts.of(t.diff) == c
                assert view.counts == {"added": c.added, "removed": c.removed, "changed": c.changed,
                                       "moved": c.moved}, s
                assert len(view.removed) == sum(1 for ch in s.diff.changes if ch.kind == REMOVED)
                assert str(change_cell(s)) == s.effect(), s
            else:
                assert s.index not in diff_json and c == StepCounts()
                assert view.counts in ({}, {"added": 0, "removed": 0, "changed": 0, "moved": 0})
        assert set(diff_json) <= {s.index for s in steps}


def _cases() -> list:
    """(bundle, capture id) of every capture with passes in tests/data; the second and
    later captures of one kernel (the matmul variants: seconds each) are marked slow."""
    cases = []
    for path in BUNDLES:
        with irscope.open(str(path)) as b:
            seen: set[str] = set()
            for c in b.captures():
                if not c.pass_count:
                    continue
                marks = [pytest.mark.slow] if c.kernel in seen else []
                seen.add(c.kernel)
                cases.append(pytest.param(path, c.id, marks=marks, id=f"{path.stem}-{c.id}-{c.kernel}"))
    return cases


@pytest.mark.parametrize("path,capture_id", _cases())
def test_every_view_gives_each_pass_the_same_counts(path, capture_id):
    check_every_view_agrees(path, capture_id)


LLVM_PASSES = DATA / "vector_add_llvm_passes.irscope"
"""``irscope run sample_kernels/vector_add.py --llvm-passes`` (Triton 3.6, sm_90)."""


def test_llvm_passes_capture_sides():
    """LLVM dumps hold the IR after their pass, MLIR ones the IR before it (the
    consistency test above covers this bundle's counts)."""
    assert LLVM_PASSES in BUNDLES
    with irscope.open(str(LLVM_PASSES)) as b:
        cap = b.captures()[0]
        steps = cap.pass_steps()
        assert {s.snapshot for s in steps if s.kind in ("llvm", "mir")} == {"after"}
        assert {s.snapshot for s in steps if s.kind == "mlir" and not s.internal} == {"before"}
        assert all(s.after == Side(s.index) for s in steps if s.kind in ("llvm", "mir"))
        codegen = [s for s in steps if s.stage == "ptx" and s.kind == "llvm"]
        assert codegen[0].before == Side(stage="llir")  # the codegen pipeline starts from the llir file
        assert any(s.changed and s.counts.total for s in steps if s.kind == "llvm")
        # LLVM prints the whole module after some passes and one function after others:
        # that alone is no change, and the diff compares only the functions both print
        scoped = [s for s in steps if s.kind == "llvm" and s.after_known
                  and module_scope(cap.side_text(s.before)) != module_scope(cap.side_text(s.after))]
        assert scoped
        for s in scoped:
            assert s.text_diff is not None and (bool(s.text_diff.changes) == s.changed), s


# -- LLVM "after" snapshots: the change is credited to the pass that made it ------------

REMOVED_LINE = next(ln for ln in LLIR.splitlines() if "st.global" in ln and "%35" in ln) + "\n"
ADDED_LINE = "  %36 = add i32 %3, 7, !dbg !19\n"


def _four_pass_bundle(path: Path) -> Path:
    """A capture whose ``ptx`` stage ran four LLVM passes, printed after each: A (no
    change), B (removes one store), C (no change), D (adds one add)."""
    without = LLIR.replace(REMOVED_LINE, "", 1)
    assert without != LLIR
    with_add = without.replace("  ret void", ADDED_LINE + "  ret void", 1)
    texts = {"A": LLIR, "B": without, "C": without, "D": with_add}
    records = [PassRecord(i, "ptx", "llvm", "after", name, name.lower(), "", "module", "", text)
               for i, (name, text) in enumerate(texts.items())]
    k = CapturedKernel(
        kernel="add_kernel", file="k.py", first_line=1, source="", target="sm_90", variant="v", hash="h",
        signature={}, constexprs={}, attrs={}, options={"num_warps": 4}, versions={"triton": "3.6.0"}, host="h",
        argv=["k.py"], started="now", compile_seconds=0.1, stage_seconds={},
        stages={"llir": LLIR, "ptx": (DATA / "ir" / "3.6.0" / "add_sm90" / "add_kernel.ptx").read_text()},
        passes=records, resources=Resources(registers=26, spill_stores=0, spill_loads=0, shared=0, source="test"),
        metadata={}, mode="compile-only")
    with Bundle.open(str(path), create=True) as out:
        run = out.begin_run(RunInfo(["irscope"], "k.py", "/", "h", "compile-only", ["sm_90"], True, "0", "now", "py"))
        out.add_capture(run, k)
        out.finish_run(run, complete=True, status="ok")
    return path


def test_after_snapshots_credit_the_pass_that_changed_the_ir(tmp_path):
    path = _four_pass_bundle(tmp_path / "four.irscope")
    entries = cli_json("diff", f"{path}:add_kernel", "--passes", "--json")
    assert [(e["name"], e["diff"]["added"], e["diff"]["removed"]) for e in entries] == [("B", 0, 1), ("D", 1, 0)]
    assert [e["next"] for e in entries] == [1, 3]  # an "after" snapshot is its own pass's result
    listed = cli_json("passes", path, "add_kernel", "--json")
    assert [(p["name"], p["changed"], p["added"], p["removed"]) for p in listed] == [
        ("A", False, 0, 0), ("B", True, 0, 1), ("C", False, 0, 0), ("D", True, 1, 0)]
    assert listed[0]["before"] == {"stage": "llir"}  # the codegen pipeline starts from the llir file
    assert [p["forms"]["removed"] for p in listed] == [0, 1, 0, 0]
    with irscope.open(str(path)) as b:
        cap = b.capture("add_kernel")
        report = timeline(cap)
        assert [(t.name, t.added, t.removed) for t in report if t.changed] == [("B", 0, 1), ("D", 1, 0)]
        b_step = cap.pass_steps()[1]
        (gone,) = [c for c in b_step.diff.changes if c.kind == REMOVED]
        assert "st.global" in gone.before.text


# -- nested passes ----------------------------------------------------------------------

def test_nested_passes_sit_under_their_parent():
    with irscope.open(str(DATA / "samples_sm90.irscope")) as b:
        cap = b.capture("matmul_kernel", variant=0)
        steps = cap.pass_steps()
        ttir = [s for s in steps if s.stage == "ttir"]
        inliner = ttir[0]
        assert inliner.name == "Inliner" and inliner.depth == 0 and inliner.parent is None
        nested = [s for s in ttir if s.parent == inliner.index]
        # the canonicalize runs the inliner made on each function it visited ('tt.func' anchors)
        assert nested and all(s.name == "Canonicalizer" and s.depth == 1 for s in nested)
        assert [s.index for s in nested] == list(range(1, len(nested) + 1))
        assert all(s.anchor == "tt.func" for s in nested)
        after = ttir[len(nested) + 1]
        assert after.depth == 0 and after.anchor == "builtin.module"
        # the inliner's change spans its nested runs: the IR after it is the next top-level snapshot
        assert inliner.after == Side(after.index)
        assert inliner.changed and inliner.counts.removed > 0
        # a nested run ends where the next one (or the parent's result) starts
        assert [s.after for s in nested] == [Side(s.index + 1) for s in nested]
        # the pipeliner's internal steps sit under the pipeline pass
        pipe = next(s for s in steps if s.name == "TritonGPUPipeline")
        internal = [s for s in steps if s.internal]
        assert internal and all(s.parent == pipe.index and s.depth == 1 for s in internal)
        # sums and origins count top-level passes only: the inlining is the inliner's
        assert not any(s.top_level for s in nested)
        made = {o.introduced_by.index for o in cap.origins()["ttir"].ops if o.introduced_by}
        erased_by = {e.erased_by.index for e in cap.origins()["ttir"].erased}
        assert not (made | erased_by) & {s.index for s in nested}
        assert inliner.index in erased_by


def test_nesting_rule_on_headers():
    from irscope.store.bundle import PassRow

    def row(i, anchor, when="before", stage="ttir", kind="mlir"):
        return PassRow(i, stage, kind, when, f"P{i}", f"p{i}", "", anchor, "", 0, 0)

    rows = [row(0, "builtin.module"), row(1, "tt.func"), row(2, "tt.func"), row(3, "builtin.module"),
            row(4, "", "internal"), row(5, "builtin.module", stage="ttgir"), row(6, "function", "after", "ptx", "llvm")]
    assert nesting(rows) == [(None, 0), (0, 1), (0, 1), (None, 0), (3, 1), (None, 0), (None, 0)]
    places = place_steps(rows, ["ttir", "ttgir", "llir"])
    assert [p.after for p in places[:4]] == [Side(3), Side(2), Side(3), Side(stage="ttir")]
    assert places[4].before == Side(3) and places[4].after == Side(4)
    assert places[6].before == Side(stage="llir") and places[6].snapshot == "after"


# -- origins agree with the step's structural diff ----------------------------------------

def test_origins_follow_the_structural_diff():
    """A renamed layout alias is no change: TritonGPUCoalesce renames ``#blocked``
    aliases, and must not be said to erase (and remake) the ops that use them."""
    with irscope.open(str(DATA / "samples_sm90.irscope")) as b:
        for cap in b.captures("matmul_kernel"):
            steps = cap.pass_steps()
            coalesce = next(s for s in steps if s.name == "TritonGPUCoalesce")
            assert coalesce.counts.removed == 0
            origins = cap.origins()["ttgir"]
            assert not [e for e in origins.erased if e.erased_by.index == coalesce.index]
            dots = [o for o in origins.ops if o.name == "tt.dot" or o.name == "ttng.warp_group_dot"]
            assert dots and all(o.introduced_by is None or o.introduced_by.index != coalesce.index for o in dots)
            # per pass: what origins say it erased is what its diff removed (ops, not aliases)
            for stage, group in (("ttir", "ttir"), ("ttgir", "ttgir")):
                data = cap.origins()[stage]
                for s in steps:
                    if s.stage != group or not s.top_level or s.diff is None:
                        continue
                    removed = sum(1 for c in s.diff.changes if c.kind == REMOVED and c.before and c.before.line > 0)
                    erased = sum(e.count for e in data.erased if e.erased_by.index == s.index)
                    assert erased == removed, s
                    made = sum(1 for o in data.ops if o.introduced_by and o.introduced_by.index == s.index)
                    assert made <= s.counts.added, s
