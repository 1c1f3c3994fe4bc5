"""The report's "Measured" section on real H200 profiles (the shared ``profiled``
fixture): the "where the time goes" table, the source heat map and the stage heat maps
carry the samples the core gives (:func:`irscope.core.profile.profile_of`), nothing is
lost (lines + unattributed == the profile's total; a stage's bands hold all of its
ops' samples), every source text is escaped, and a capture with no profile has no
such section."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

import irscope
from irscope.core.profile import profile_of
from irscope.export.report.build import build_report

from conftest import DATA, irscope as run_irscope


def _report(path: Path, out: Path) -> str:
    build_report([str(path)], str(out), command="irscope report X -o report", pictures=False)
    pages = sorted(out.glob("kernel-*.html"))
    assert pages
    return pages[0].read_text(encoding="utf-8")


def _section(page: str) -> str:
    start = page.index('<section id="heat">')
    return page[start:page.index("</section>", start)]


def _rows(section: str, table: str) -> list[tuple[int, str, int]]:
    part = section[section.index(f'id="{table}"'):]
    part = part[:part.index("</table>")]
    return [(int(m.group(1)), html.unescape(m.group(2)), int(m.group(3)))
            for m in re.finditer(r'<tr data-line="(\d+)" data-file="([^"]*)" data-samples="(\d+)">', part)]


@pytest.mark.parametrize("name", ["jit_helper_call", "fused_softmax"])
def test_heat_section_carries_the_core_samples(profiled, tmp_path, name):
    pb = profiled.ncu(name)
    cap = irscope.open(str(pb.path)).capture(pb.kernel)
    hot, calls = profile_of(cap), profile_of(cap, call_sites=True)
    assert hot is not None and calls is not None
    section = _section(_report(pb.path, tmp_path / "report"))
    rows = _rows(section, "heat-lines")
    assert rows == [(lh.line, lh.file, lh.samples) for lh in hot.lines]
    unattributed = int(re.search(r'<tr class="unattributed" data-samples="(\d+)">', section).group(1))
    assert sum(s for _, _, s in rows) + unattributed == hot.total_samples
    if calls.lines != hot.lines:  # helpers: the same samples on their call lines
        assert _rows(section, "heat-calls") == [(lh.line, lh.file, lh.samples) for lh in calls.lines]
    # the source map: every row's samples are the core's for that line
    source = section[section.index('id="heat-source"'):]
    mapped = [(int(m.group(1)), html.unescape(m.group(2)), int(m.group(3)))
              for m in re.finditer(r'<div class="heat-line" data-line="(\d+)" data-file="([^"]*)" '
                                   r'data-samples="(\d+)"', source)]
    assert mapped
    for line, file, samples in mapped:
        lh = hot.line(line, file)
        assert samples == (lh.samples if lh is not None else 0), line
    assert sum(s for _, _, s in mapped) == sum(lh.samples for lh in hot.lines)
    # each stage: its bands hold all its ops' samples; its first op row is the core's hottest op
    for stage in hot.stages:
        part = section[section.index(f'<div class="heat-stage" data-stage="{stage}">'):]
        part = part[:part.index("</table>")]
        bands = [float(x) for x in re.findall(r'class="band"[^>]*data-samples="([\d.]+)"', part)]
        assert sum(bands) == pytest.approx(sum(hot.stage_heat(stage).values()), abs=0.01 * len(bands) + 0.01)
        first = re.search(r'<tr data-stage-line="(\d+)">', part)
        assert first is not None and int(first.group(1)) == hot.ops(stage)[0].stage_line


def test_heat_section_escapes_source_text(profiled, tmp_path):
    pb = profiled.ncu("jit_helper_call")
    section = _section(_report(pb.path, tmp_path / "report"))
    # _load_tile's mask line compares with <: it must reach the page as text
    assert "(rows[:, None] &lt; n_rows)" in section
    assert "(rows[:, None] < n_rows)" not in section
    tags = set(re.findall(r"</?([a-z0-9]+)", section))  # no tag comes from a capture's text
    assert tags <= {"section", "h2", "h3", "h4", "p", "code", "div", "table", "thead", "tbody", "tr", "th", "td",
                    "span"}


def test_no_profile_no_heat_section(tmp_path):
    page = _report(DATA / "profiles" / "vector_add" / "gpu.irscope", tmp_path / "report")
    assert 'id="heat"' not in page


def test_hostile_profile_stamp_is_escaped(tmp_path):
    path = tmp_path / "hostile.irscope"
    path.write_bytes((DATA / "profiles" / "vector_add" / "gpu.irscope").read_bytes())
    run_irscope("profile", "import", path, "add_kernel", DATA / "profiles" / "vector_add" / "sass.csv",
            "--gpu", "<script>alert(1)</script>", "--tool-version", '"><img src=x>', check=True)
    section = _section(_report(path, tmp_path / "report"))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in section and "<script" not in section
    assert "&quot;&gt;&lt;img src=x&gt;" in section and "<img" not in section


def test_pair_page_shows_the_sample_change(profiled, tmp_path):
    a, b = profiled.ncu("fused_softmax"), profiled.proton("fused_softmax")  # one kernel, two profiles
    out = tmp_path / "report"
    build_report([str(a.path), str(b.path)], str(out), command="irscope report A B -o report", pictures=False)
    page = next(out.glob("diff-*.html")).read_text(encoding="utf-8")
    section = page[page.index('<section id="heat-diff">'):]
    section = section[:section.index("</section>")]
    got = [(int(m.group(1)), int(m.group(2)), int(m.group(3)))
           for m in re.finditer(r'<tr[^>]* data-line="(\d+)" data-file="[^"]*" data-before="(\d+)" '
                                r'data-after="(\d+)">', section)]
    with irscope.open(str(a.path)) as ba, irscope.open(str(b.path)) as bb:
        ha, hb = profile_of(ba.capture(a.kernel)), profile_of(bb.capture(b.kernel))
        assert ha is not None and hb is not None
        want_a = {lh.line: lh.samples for lh in ha.lines}
        want_b = {lh.line: lh.samples for lh in hb.lines}
    assert got == [(n, want_a.get(n, 0), want_b.get(n, 0)) for n in sorted(set(want_a) | set(want_b))]
