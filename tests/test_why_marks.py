"""The core's "why" marks (irscope/core/why_marks.py, which the app's glyph column and
the report's per-line table both draw) rest on the explanation's facts for each line
(tests/test_tui_snap_why.py and tests/test_report_why.py check each view against
``irscope explain --json``)."""

from __future__ import annotations

import pytest

from irscope.core import open_bundle
from irscope.core import why_marks as marks

from conftest import DATA


@pytest.mark.parametrize("bundle", ["why_sm90_sm80.irscope", "why_conversions.irscope", "why_loops.irscope",
                                    "learner_sm90.irscope"])
def test_marks_rest_on_the_lines_facts(bundle):
    marked = 0
    with open_bundle(str(DATA / bundle)) as b:
        for cap in b.captures():
            ex = cap.explain()
            kinds = marks.kinds_present(ex)
            for ln in ex.lines:
                got = marks.line_marks(ex, ln)
                assert set(got) <= set(kinds)
                assert (marks.SHARED_CONVERSION in got) == any(c.via == "shared_memory"
                                                              for c in marks.conversions_at(ex, ln))
                assert (marks.NOT_PIPELINED in got) == any(not lp.pipelined for lp in marks.loops_at(ex, ln))
                # each mark rests on the core's fact for that line
                assert (marks.NARROW in got) == any(a.narrow for a in ln.global_accesses)
                assert (marks.SPILL in got) == (ln.spills > 0)
                assert (marks.REMARK in got) == bool(ln.remarks)
                marked += bool(got)
    assert marked
