"""The app's and the report's "why" marks (irscope/tui/why_marks.py and
irscope/export/why_marks.py: two copies, as the app and the exporters may not import
each other) give every line of every capture the same marks, conversions, loops and
hints, read from the core's explain()."""

from __future__ import annotations

import pytest

from irscope.core import open_bundle
from irscope.export import why_marks as report_marks
from irscope.tui import why_marks as app_marks

from conftest import DATA


@pytest.mark.parametrize("bundle", ["why_sm90_sm80.irscope", "why_conversions.irscope", "why_loops.irscope",
                                    "learner_sm90.irscope"])
def test_app_and_report_marks_agree(bundle):
    assert [(m.key, m.glyph, m.meaning) for m in app_marks.MARKS] == \
        [(m.key, m.glyph, m.meaning) for m in report_marks.MARKS]
    marked = 0
    with open_bundle(str(DATA / bundle)) as b:
        for cap in b.captures():
            ex = cap.explain()
            assert app_marks.kinds_present(ex) == report_marks.kinds_present(ex)
            assert app_marks.legend(app_marks.kinds_present(ex)) == report_marks.legend(report_marks.kinds_present(ex))
            for ln in ex.lines:
                got = app_marks.line_marks(ex, ln)
                assert got == report_marks.line_marks(ex, ln)
                assert app_marks.conversions_at(ex, ln) == report_marks.conversions_at(ex, ln)
                assert app_marks.loops_at(ex, ln) == report_marks.loops_at(ex, ln)
                assert app_marks.hints_at(ex, ln) == report_marks.hints_at(ex, ln)
                # each mark rests on the core's fact for that line
                assert (app_marks.NARROW in got) == any(a.narrow for a in ln.global_accesses)
                assert (app_marks.SPILL in got) == (ln.spills > 0)
                assert (app_marks.REMARK in got) == bool(ln.remarks)
                marked += bool(got)
    assert marked
