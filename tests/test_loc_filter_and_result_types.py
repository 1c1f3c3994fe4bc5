"""The kernel view's "hide #loc" rules and the result types ``irscope layout`` labels,
on real captures (tests/data/learner_sm90.irscope).

- :mod:`irscope.tui.loc_filter`: every location alias line of a real TTGIR is hidden,
  no other line is, and every op line loses its ``loc(...)`` and nothing else.
- :func:`irscope.ir.result_types.op_result_types`: ``tt.load`` of a tensor of f16
  pointers defines f16 values; ``arith.cmpi`` defines i1. ``irscope layout`` labels
  the load's result with that type, in its JSON and its SVG title.
"""

from __future__ import annotations

import json
import re

import pytest

from irscope.core import open_bundle
from irscope.ir.forms import normalise_op_text
from irscope.ir.result_types import op_result_types
from irscope.ir.type_model import ScalarType, TensorType
from irscope.tui.loc_filter import is_loc_line, strip_loc

from conftest import DATA, irscope

LEARNER = DATA / "learner_sm90.irscope"


@pytest.fixture(scope="module")
def attn():
    """The non-causal attention capture's parsed TTGIR and its text."""
    with open_bundle(str(LEARNER)) as b:
        cap = b.captures("_attn_fwd")[0]
        stage = cap.stage("ttgir")
        yield stage.module, stage.text


def test_loc_lines_are_the_location_table(attn):
    module, text = attn
    lines = text.splitlines()
    hidden = {i + 1 for i, line in enumerate(lines) if is_loc_line(line)}
    table = {i + 1 for i, line in enumerate(lines) if re.match(r"#loc[\w$.-]* = loc\(", line)}
    assert hidden == table and len(hidden) == len(module.loc_aliases)
    assert not hidden & {op.line for op in module.ops()}  # no op is hidden


def test_strip_loc_takes_out_locations_only(attn):
    module, text = attn
    lines = text.splitlines()
    stripped = 0
    for op in module.ops():
        line = lines[op.line - 1]
        shown = strip_loc(line)
        assert "loc(" not in shown.replace('"loc(', "")
        # Only locations go: the op's form (its text without them) is unchanged.
        assert normalise_op_text(shown) == normalise_op_text(line)
        stripped += shown != line
    assert stripped > 100
    signature = next(line for line in lines if "tt.func public @_attn_fwd(" in line)
    assert 'loc("Q"(#loc))' in signature and "loc(" not in strip_loc(signature)
    assert strip_loc("%a = call @alloc(%b) : i32") == "%a = call @alloc(%b) : i32"


def test_tt_load_defines_the_pointee_type_and_cmpi_i1(attn):
    module, _ = attn
    aliases = module.encodings
    loads = [op for op in module.ops() if op.name == "tt.load"]
    assert loads
    for op in loads:
        printed = op.signature(aliases).results[0]
        (result,) = op_result_types(op, aliases)
        assert isinstance(printed, TensorType) and isinstance(result, TensorType)
        assert "!tt.ptr" in str(printed.element) and str(result.element) == "f16"
        assert (result.shape, result.encoding_ref) == (printed.shape, printed.encoding_ref)
    cmps = [op for op in module.ops() if op.name == "arith.cmpi"]
    assert cmps
    for op in cmps:
        (result,) = op_result_types(op, aliases)
        element = result.element if isinstance(result, TensorType) else result
        assert element == ScalarType("i1", 1, "int")
    adds = [op for op in module.ops() if op.name == "arith.addf"]
    assert adds and all(op_result_types(op, aliases) == tuple(op.signature(aliases).results) for op in adds)


def test_layout_labels_the_loaded_values_f16(tmp_path, attn):
    module, _ = attn
    line = next(op.line for op in module.ops() if op.name == "tt.load"
                and "tensor<128x64x!tt.ptr<f16>, #blocked>" in op.text)
    p = irscope("layout", LEARNER, "_attn_fwd", "--variant", "0", "--op-line", line, check=True)
    data = json.loads(p.stdout)
    assert [side["type"] for side in data["layouts"]] == ["tensor<128x64xf16, #blocked>"]
    svg = tmp_path / "load.svg"
    irscope("layout", LEARNER, "_attn_fwd", "--variant", "0", "--op-line", line, "-o", svg, check=True)
    shown = svg.read_text()
    assert "tensor&lt;128x64xf16, #blocked&gt;" in shown and "128x64x!tt.ptr" not in shown


def test_op_details_show_the_loaded_type():
    """The kernel view's op details list the result types the op defines."""
    from irscope.tui.widgets.op_details import op_detail
    from irscope.tui.widgets.stage_tabs import view_stages

    with open_bundle(str(LEARNER)) as b:
        cap = b.captures("_attn_fwd")[0]
        module = cap.stage("ttgir").module
        op = next(o for o in module.ops() if o.name == "tt.load"
                  and "tensor<128x64x!tt.ptr<f16>, #blocked>" in o.text)
        detail = op_detail(cap, "ttgir", op, module, view_stages(cap.stages), grid_cols=16)
    assert detail.result_types == ["tensor<128x64xf16, #blocked>"]
    assert detail.operand_types == ["tensor<128x64x!tt.ptr<f16>, #blocked>"]


def test_def_use_gives_the_loaded_type(attn):
    """The core's def-use (``irscope show``, the op graph) types a load's value by what
    it holds."""
    from irscope.ir.values import def_use

    module, _ = attn
    function = module.functions[0]
    du = def_use(function)
    op = next(o for o in function.ops() if o.name == "tt.load"
              and "tensor<128x64x!tt.ptr<f16>, #blocked>" in o.text)
    assert [r.type_text for r in du.results(op)] == ["tensor<128x64xf16, #blocked>"]
