"""The report's "Why" section on tests/data/why_sm90_sm80.irscope: one table row per
line with a fact, carrying the numbers ``irscope explain --json`` gives for that line
(the core computes them once), the hints with their evidence, and every string from
the capture escaped."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from irscope.export.report.build import build_report

from conftest import DATA, irscope

WHY = DATA / "why_sm90_sm80.irscope"


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("why") / "report"
    build_report([str(WHY)], str(out), command="irscope report why_sm90_sm80.irscope -o report", pictures=False)
    return out


def _page(report: Path, kernel: str, target: str) -> str:
    for p in sorted(report.glob("kernel-*.html")):
        text = p.read_text(encoding="utf-8")
        title = re.search(r"<title>(.*?)</title>", text).group(1)
        if html.unescape(title).startswith(f"{kernel} [") and html.unescape(title).endswith(f" {target}"):
            return text
    raise AssertionError(f"no page for {kernel} {target}")


def _rows(page: str) -> dict[int, str]:
    section = page[page.index('<section id="why">'):]
    section = section[:section.index("</section>")]
    return {int(m.group(1)): m.group(0) for m in re.finditer(r'<tr data-line="(\d+)".*?</tr>', section)}


def _explain(kernel: str, target: str) -> dict:
    return json.loads(irscope("explain", WHY, kernel, "--target", target, "--json", check=True).stdout)


@pytest.mark.parametrize("kernel,target", [("gather_kernel", "sm_90"), ("gather_kernel", "sm_80"),
                                           ("big_tile_gemm_kernel", "sm_90"), ("big_tile_gemm_kernel", "sm_80")])
def test_why_table_rows_carry_the_explain_json_numbers(report, kernel, target):
    want = _explain(kernel, target)
    rows = _rows(_page(report, kernel, target))
    with_facts = [ln for ln in want["lines"]
                  if ln["global_accesses"] or ln["shared_tensor"] or ln["spills"] or ln["remarks"]]
    assert with_facts and {ln["line"] for ln in with_facts} <= set(rows)
    for ln in with_facts:
        row = rows[ln["line"]]
        assert f'data-spills="{ln["spills"]}"' in row
        accesses = re.findall(r'<li(?: class="narrow")? data-kind="(\w+)" data-bits="(\d*)" data-elements="(\d*)" '
                              r'data-max-elements="(\d*)" data-masked="(true|false)"', row)
        expect = [(a["kind"], "" if a["bits"] is None else str(a["bits"]),
                   "" if a["elements"] is None else str(a["elements"]),
                   "" if a["max_elements"] is None else str(a["max_elements"]), str(a["masked"]).lower())
                  for a in ln["global_accesses"]]
        assert accesses == expect, ln["line"]
        for r in ln["remarks"]:
            assert f"<li>{html.escape(r, quote=True)}</li>" in row
    # the gather's narrow load carries the narrow mark; the GEMM's spilling lines the spill mark
    if kernel == "gather_kernel":
        assert 'class="narrow"' in rows[16] and 'class="why-narrow"' in rows[16]
    else:
        assert all('class="why-spill"' in rows[ln["line"]] for ln in with_facts if ln["spills"])


def test_why_hints_section_lists_the_json_hints_with_evidence(report):
    want = _explain("gather_kernel", "sm_90")
    page = _page(report, "gather_kernel", "sm_90")
    section = page[page.index('<section id="why">'):]
    section = section[:section.index("</section>")]
    assert "<h3>Hints</h3>" in section
    assert want["hints_computed"] and want["hints"]
    for h in want["hints"]:
        assert html.escape(h["text"], quote=True) in section
        for e in h["evidence"]:
            assert f"<li>{html.escape(e, quote=True)}</li>" in section
    # external strings are escaped: the remark's text appears only escaped, never as markup
    assert "<script" not in section.lower()


def test_why_section_escapes_every_string_from_the_capture():
    from dataclasses import replace

    from irscope.core import open_bundle
    from irscope.export.report.why import why_html

    hostile = '<script>alert("x")</script> & <b>'
    with open_bundle(str(WHY)) as b:
        ex = b.capture("gather_kernel", "sm_90").explain()
        ln = ex.line(16)
        assert ln is not None and ln.remarks
        bad_line = replace(ln, remarks=(replace(ln.remarks[0], text=hostile),),
                           costs=replace(ln.costs, function=hostile))
        bad = replace(ex, lines=tuple(bad_line if x is ln else x for x in ex.lines),
                      hints=tuple(replace(h, text=hostile) for h in ex.hints))
        out = why_html(bad)
    assert "<script" not in out and hostile not in out
    assert html.escape(hostile, quote=True) in out
