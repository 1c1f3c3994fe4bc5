"""The report of a profiled capture in a real browser (Debian's Chromium driven by
Playwright, from ``file://``): the linked source and stages tint each measured line's
number, one row per line the core gives samples (:func:`irscope.core.profile.profile_of`),
titled with its samples; the "Measured" section is on the page; no script error."""

from __future__ import annotations

import os

import pytest

import irscope
from irscope.core.profile import profile_of
from irscope.export.report.build import build_report

CHROMIUM = "/usr/bin/chromium"

if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is absent (Debian's chromium package): the browser tests need it",
                allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


def test_linked_panes_tint_the_measured_lines(profiled, tmp_path):
    pb = profiled.ncu("jit_helper_call")
    cap = irscope.open(str(pb.path)).capture(pb.kernel)
    hot = profile_of(cap)
    assert hot is not None
    out = tmp_path / "report"
    build_report([str(pb.path)], str(out), command="irscope report X -o report", pictures=False)
    page_path = next(out.glob("kernel-*.html"))
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            pg = browser.new_page(viewport={"width": 1500, "height": 1000})
            errors: list[str] = []
            pg.on("pageerror", lambda e: errors.append(str(e)))
            pg.goto(page_path.as_uri())
            pg.wait_for_selector("body[data-ready]", timeout=60_000)
            assert pg.is_visible("#heat") and pg.is_visible("#heat-lines")
            # the source: one tinted row per line with samples, the hottest titled with its count
            tinted = pg.eval_on_selector_all(
                "#source .row.heat", "rs => rs.map(r => [r.dataset.fn, Number(r.dataset.line), r.title])")
            assert sorted(line for _, line, _ in tinted) == sorted(lh.line for lh in hot.lines)
            top = hot.lines[0]
            title = next(t for _, line, t in tinted if line == top.line)
            assert title.startswith(f"{top.samples} samples, {100 * top.samples / hot.total_samples:.1f}%")
            # each stage the samples are laid over: one tinted row per stage line with samples
            for stage in hot.stages:
                rows = pg.eval_on_selector_all(
                    f'.stage-pane[data-stage="{stage}"] .row.heat', "rs => rs.map(r => Number(r.dataset.line))")
                assert sorted(rows) == sorted(n for n, s in hot.stage_heat(stage).items() if s), stage
            assert "ttir" in hot.stages  # TTIR too: every stage of the capture has its heat
            tint = pg.eval_on_selector(f'#source .row.heat[data-line="{top.line}"] .num',
                                       "e => getComputedStyle(e).backgroundColor")
            assert tint not in ("rgba(0, 0, 0, 0)", "transparent")
            assert errors == []
        finally:
            browser.close()
