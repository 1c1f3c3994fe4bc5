"""The change list ``irscope diff`` prints and the app draws, constants paired by type
and value, and renamed dialects as one row: on real IR (tests/data captures and the
Triton 3.2 / 3.9 files of tests/data/ir)."""

from __future__ import annotations

import re

import pytest

from irscope.cli.diff_render import aligned_diff
from irscope.core import open_bundle
from irscope.diff.change_list import ChangeItem, Fold, change_list, change_position
from irscope.diff.compare import compare_captures
from irscope.diff.dialect_counts import dialect_rows
from irscope.ir import parse_stage
from irscope.irdiff.engine import diff_modules
from irscope.irdiff.model import CHANGED, REMOVED

from conftest import DATA, irscope

IR = DATA / "ir"
KERNELS = ("add", "attn", "helper", "matmul", "softmax")


@pytest.fixture(scope="module")
def matmul_pair():
    with open_bundle(str(DATA / "samples_sm90.irscope")) as b:
        a, c = b.capture("matmul_kernel", variant=0), b.capture("matmul_kernel", variant=1)
        yield compare_captures(a, c)


@pytest.fixture(scope="module")
def learner():
    with open_bundle(str(DATA / "learner_sm90.irscope")) as b:
        yield b


def _version_diff(kernel: str, stage: str, target: str = "sm90"):
    old = next((IR / "3.2.0" / f"{kernel}_{target}").glob(f"*.{stage}")).read_text()
    new = next((IR / "3.9.0" / f"{kernel}_{target}").glob(f"*.{stage}")).read_text()
    return diff_modules(parse_stage(stage, old), parse_stage(stage, new), stage)


# ------------------------------------------------------------ the change list

def test_every_paired_op_is_folded_or_changed_once(matmul_pair):
    for stage, d in matmul_pair.stages.items():
        listed = change_list(d)
        folded = [p for f in listed.folds for p in f.pairs]
        in_place = {c.change.after.line for c in listed.changes
                    if c.change.kind == CHANGED and c.change.after is not None and c.change.after.line
                    and c.change.before is not None and c.change.before.line}
        assert len(folded) == len(set(folded)), stage
        # every pair the engine aligned is in one run, or is a change of its own
        assert {p[1] for p in folded} | in_place == {p[1] for p in d.pairs}, stage
        assert listed.shown == listed.total == len(d.changes)
        assert [c.number for c in listed.changes] == list(range(1, len(d.changes) + 1))


def test_items_follow_the_new_side_and_removed_ops_sit_at_their_anchor(matmul_pair):
    d = matmul_pair.stages["ttgir"]
    rows = sorted(d.pairs)
    olds = [r[0] for r in rows]
    listed = change_list(d)
    last = 0.0
    for i, item in enumerate(listed.items):
        if isinstance(item, Fold):
            assert min(p[1] for p in item.pairs) >= last
            last = max(p[1] for p in item.pairs)
            continue
        pos = change_position(item.change, rows, olds)
        if pos is None:
            continue
        assert pos >= last
        last = pos
        if item.change.kind == REMOVED and i and isinstance(listed.items[i - 1], Fold):
            # the run above a removed op ends at the op it follows on the old side
            assert max(listed.items[i - 1].pairs)[0] < item.change.before.line
    assert any(c.change.kind == REMOVED for c in listed.changes)


def test_a_limit_lists_the_first_changes_and_no_run_after_them(matmul_pair):
    d = matmul_pair.stages["llir"]
    listed = change_list(d, 5)
    assert listed.shown == 5 and listed.left_out == len(d.changes) - 5
    assert isinstance(listed.items[-1], ChangeItem)
    assert [c.change for c in listed.changes] == list(d.changes[:5])


def test_cli_prints_the_change_list(matmul_pair):
    d = matmul_pair.stages["ttir"]
    printed = [int(m.group(1)) for ln in aligned_diff(d, None)
               if (m := re.match(r"    ⋯ (\d+) unchanged op\(s\)$", ln.plain))]
    assert printed == [f.count for f in change_list(d).folds] and printed
    marks = [ln.plain[0] for ln in aligned_diff(d, None) if ln.plain[:1] in "+-~>" and ln.plain[1:2] == " "]
    assert len(marks) == len(d.changes)


# ------------------------------------------------------------ constants

_CONST = re.compile(r"arith\.constant (?P<value>.+?) : (?P<type>.+?)(?: loc\(.*\))?$")


def _const(text: str) -> tuple[str, str, str]:
    """(value, type without encoding, element type) of an arith.constant line."""
    m = _CONST.search(text)
    assert m, text
    shape = re.sub(r",\s*#[\w.]+(?:<\{[^}]*\}>)?", "", m.group("type"))
    element = shape[shape.rfind("x") + 1:].rstrip(">") if shape.startswith("tensor<") else shape
    return m.group("value"), shape, element


def _constant_pairs(d):
    return [c for c in d.changes if c.kind == CHANGED and c.op == "arith.constant"
            and c.before is not None and c.after is not None]


def _check_constant_pairs(d) -> int:
    """Every constant the diff calls changed kept its type (a tensor's value changed),
    or its value and shape or element type; a scalar never changes value."""
    pairs = _constant_pairs(d)
    for c in pairs:
        (va, sa, ea), (vb, sb, eb) = _const(c.before.text), _const(c.after.text)
        if not sa.startswith("tensor<"):
            assert va == vb, (c.before.text, c.after.text)
        assert sa == sb or (va == vb and ea == eb), (c.before.text, c.after.text)
    return len(pairs)


def test_constants_of_another_type_and_value_are_not_one_changed_op(learner):
    cap = learner.capture("block_ptr_matmul_kernel")
    # the first layout clean-up: it rewrites every constant's layout
    d = next(s for s in cap.pass_steps() if s.name == "TritonGPURemoveLayoutConversions").diff
    assert _check_constant_pairs(d) >= 5
    # the zero accumulator pairs with the zero accumulator, and its layout delta is decoded
    acc = next(c for c in _constant_pairs(d) if c.before.text.lstrip().startswith("%accumulator"))
    assert acc.after.text.lstrip().startswith("%accumulator")
    assert any("sizePerThread [1, 1] -> [1, 8]" in det for c in _constant_pairs(d) for det in c.details)
    # no scalar constant paired with a tensor one (``type: i64 => tensor<128x128xf32>``)
    assert not any(det.startswith("type: i") for c in _constant_pairs(d) for det in c.details)
    for s in cap.pass_steps():
        if s.diff is not None and s.kind == "mlir":
            _check_constant_pairs(s.diff)


def test_a_hoisted_constant_moves_rather_than_changing_another(learner):
    a, b = learner.capture("_attn_fwd", variant=0), learner.capture("_attn_fwd", variant=1)
    d = compare_captures(a, b, stages=("ttir", "ttgir")).stages
    for stage in ("ttir", "ttgir"):
        _check_constant_pairs(d[stage])
    # STAGE=3 adds a second loop: %c64_i32 is the same constant (moved), %c1_i32 a new one
    texts = [(c.before.text, c.after.text) for c in _constant_pairs(d["ttir"])]
    assert not any("64 : i32" in x and "1 : i32" in y for x, y in texts)


@pytest.mark.parametrize("kernel", KERNELS)
def test_constant_pairs_across_versions(kernel):
    for stage in ("ttir", "ttgir"):
        _check_constant_pairs(_version_diff(kernel, stage))


# ------------------------------------------------------------ dialects

def test_renamed_dialects_are_one_row():
    d = _version_diff("attn", "ttgir")
    rows = {r.label: r for r in dialect_rows(d.ops_by_dialect_before, d.ops_by_dialect_after)}
    assert "triton_gpu -> ttg" in rows and "triton_nvidia_gpu -> ttng" in rows
    assert "ttg" not in rows and "triton_gpu" not in rows
    ttg = rows["triton_gpu -> ttg"]
    assert ttg.before == d.ops_by_dialect_before["triton_gpu"] and ttg.after == d.ops_by_dialect_after["ttg"]
    # every dialect of both sides is listed, none dropped
    assert sum(r.before for r in rows.values()) == sum(d.ops_by_dialect_before.values())
    assert sum(r.after for r in rows.values()) == sum(d.ops_by_dialect_after.values())


def test_cli_summary_lists_every_dialect_across_versions():
    old = next((IR / "3.2.0" / "attn_sm90").glob("*.ttgir"))
    new = next((IR / "3.9.0" / "attn_sm90").glob("*.ttgir"))
    out = irscope("diff", old, new, check=True, env={"COLUMNS": "400"}).stdout
    assert "triton_gpu -> ttg" in out and "triton_nvidia_gpu -> ttng" in out
    d = _version_diff("attn", "ttgir")
    for name in d.ops_by_dialect_before.keys() | d.ops_by_dialect_after.keys():
        if not name.startswith("triton_"):
            assert re.search(rf"\b{re.escape(name)} \d", out), name


def test_a_stage_with_no_change_is_one_run(learner):
    cap = learner.capture("rmsnorm_kernel")
    d = compare_captures(cap, cap, stages=("ttir",)).stages["ttir"]
    assert d.identical
    listed = change_list(d)
    assert [type(i) for i in listed.items] == [Fold] and listed.items[0].count == len(d.pairs) > 0
    assert aligned_diff(d, None) == []  # the CLI prints nothing for it (its summary row says it all)
