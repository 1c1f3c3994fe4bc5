"""The report in a real browser: Debian's Chromium driven by Playwright, pages
opened from ``file://``. Click a Python line and check the lit lines of every
stage against the core API; step the pass timeline with buttons and keys; open
the hostile report and check that no injected script runs.

``IRSCOPE_SCREENSHOTS=1`` also rebuilds the samples report with its pictures and
writes the screenshots of docs/report.md to docs/images/report-*.png."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import irscope
from test_report import HOSTILE, HOSTILE_KERNEL, SAMPLES, hostile_reports, samples_report

CHROMIUM = "/usr/bin/chromium"
IMAGES = Path(__file__).resolve().parent.parent / "docs" / "images"

if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is absent (Debian's chromium package): the browser tests need it",
                allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    return samples_report(tmp_path_factory)


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory) -> Path:
    return hostile_reports(tmp_path_factory)[2]


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1500, "height": 1000})
    pg = context.new_page()
    pg.errors = []
    pg.dialogs = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    yield pg
    context.close()


def _open(pg, path: Path):
    pg.goto(path.as_uri())
    pg.wait_for_selector("body[data-ready]", timeout=60_000)
    assert pg.evaluate("document.body.dataset.ready") == "1", pg.errors
    assert pg.errors == []


_HITS = "Object.fromEntries([...document.querySelectorAll('.stage-pane')].map(p => [p.dataset.stage, " \
        "[...p.querySelectorAll('.row.hit')].map(r => Number(r.dataset.line))]))"


def test_clicking_a_python_line_lights_its_ops_in_every_stage(report, page):
    with irscope.open(str(SAMPLES)) as b:
        cap = b.capture("matmul_kernel")
        _open(page, report / f"kernel-1-{cap.id}.html")
        dot_line = next(n for n in range(cap.source.first_line, cap.source.last_line + 1)
                        if "tl.dot(" in (cap.source.line(n) or ""))
        for line in (dot_line, dot_line - 1):
            page.locator(f'#source .row[data-line="{line}"]').click()
            hits = page.evaluate(_HITS)
            expected = {s: sorted({op.line for op in ops}) for s, ops in cap.ops_at_line(line).items()}
            assert hits == expected and all(hits.values()), line  # every stage lit, only this line's ops
            assert page.locator("#source .row.selected").get_attribute("data-line") == str(line)
            for name, lines in expected.items():
                count = page.locator(f'.stage-pane[data-stage="{name}"] .count').text_content()
                assert f"{len(lines)} op(s) of line {line}" in count
            first = page.locator(f'.stage-pane[data-stage="sass"] .row[data-line="{expected["sass"][0]}"]')
            assert first.is_visible()  # the pane scrolled to it
        assert page.url.endswith(f"#line={dot_line - 1}")


def test_the_pass_timeline_steps_with_buttons_and_keys(report, page):
    with irscope.open(str(SAMPLES)) as b:
        cap = b.capture("add_kernel")
        passes = cap.passes()
        steps = {s.index: s.diff for s in cap.pass_steps() if s.diff is not None}
    changed = [p for p in passes if p.changed]
    _open(page, report / f"kernel-1-{cap.id}.html")

    def title():
        return page.locator("#pass-title").text_content()

    def shows(p):
        t = title()
        assert t.startswith(f"#{p.index} {p.stage} · {p.name}"), t
        assert page.locator(".chip.current").text_content() == str(p.index)
        items = page.locator("#pass-changes > li.change").count()
        assert items == (min(200, len(steps[p.index].changes)) if p.index in steps else 0)

    shows(changed[0])
    page.click("#next-pass")
    shows(changed[1])
    page.keyboard.press("ArrowRight")
    shows(changed[2])
    page.keyboard.press("ArrowLeft")
    shows(changed[1])
    page.uncheck("#changed-only")
    page.click("#next-pass")
    shows(passes[changed[1].index + 1])
    page.locator(".chip", has_text=str(passes[-1].index)).last.click()
    shows(passes[-1])
    page.click("#next-pass")  # the end: stays
    shows(passes[-1])
    summary = page.locator("#pass-summary").text_content()
    assert ("did not change the IR" in summary) != passes[-1].changed


def test_index_links_to_every_kernel_page(report, page):
    _open(page, report / "index.html")
    links = page.locator("table.kernels a")
    with irscope.open(str(SAMPLES)) as b:
        assert links.count() == len(b.captures())
    links.nth(0).click()
    page.wait_for_selector("body[data-ready]")
    assert page.url.endswith("kernel-1-1.html") and page.locator("#stamp").is_visible()


def test_hostile_text_is_shown_as_text_and_runs_no_script(hostile_report, page):
    pages = sorted(hostile_report.glob("*.html"))
    assert len(pages) >= 5
    for path in pages:
        _open(page, path)
        assert page.dialogs == [], path.name
        scripts = page.evaluate("[...document.scripts].map(s => s.type || s.src)")
        assert len(scripts) == (2 if path.name.startswith("kernel-") else 1), (path.name, scripts)
        assert page.evaluate("document.querySelectorAll('img:not([data-picture]):not(#lineage-img)').length") == 0
        text = page.evaluate("document.body.innerText")
        if path.name in ("index.html", "compare.html"):
            assert HOSTILE_KERNEL in text and "<script>alert(1)</script>" in text
        if path.name.startswith("kernel-"):
            assert HOSTILE_KERNEL in page.title()
            for row in page.locator("#source .row.linked-line").all()[:5]:
                row.click()
            assert page.evaluate("document.querySelectorAll('.row.hit').length") > 0
            stage_text = page.locator('.stage-pane[data-stage="ttgir"] .row[data-line="1"] .txt').text_content()
            assert stage_text.startswith(f"// {HOSTILE}")
            page.wait_for_function("[...document.querySelectorAll('img[data-picture]')].every(i => i.complete)")
            widths = page.evaluate("[...document.querySelectorAll('img[data-picture]')].map(i => i.naturalWidth)")
            assert widths and all(w > 0 for w in widths)  # the SVGs drew, through <img> only
        assert page.dialogs == [] and page.errors == [], path.name


@pytest.mark.skipif(os.environ.get("IRSCOPE_SCREENSHOTS") != "1", reason="set IRSCOPE_SCREENSHOTS=1 to redraw")
def test_write_screenshots(browser, tmp_path):
    from irscope.export.report import build_report

    out = tmp_path / "report"
    build_report([str(SAMPLES)], str(out), command="irscope report tests/data/samples_sm90.irscope -o report")
    IMAGES.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    pg.goto((out / "index.html").as_uri())
    pg.screenshot(path=str(IMAGES / "report-index.png"), full_page=True)
    with irscope.open(str(SAMPLES)) as b:
        cap = b.capture("matmul_kernel")
        dot_line = next(n for n in range(cap.source.first_line, cap.source.last_line + 1)
                        if "tl.dot(" in (cap.source.line(n) or ""))
    pg.goto((out / f"kernel-1-{cap.id}.html").as_uri())
    pg.wait_for_selector("body[data-ready]", timeout=60_000)
    pg.locator(f'#source .row[data-line="{dot_line}"]').click()
    pg.locator("#linked").scroll_into_view_if_needed()
    pg.screenshot(path=str(IMAGES / "report-linked.png"))
    for _ in range(3):
        pg.click("#next-pass")
    pg.locator("#timeline").evaluate("e => e.scrollIntoView()")
    pg.screenshot(path=str(IMAGES / "report-timeline.png"))
    pg.locator("#lineage").evaluate("e => e.scrollIntoView()")
    pg.screenshot(path=str(IMAGES / "report-lineage.png"))
    pg.locator("#layouts").evaluate("e => e.scrollIntoView()")
    pg.screenshot(path=str(IMAGES / "report-layouts.png"))
    context.close()
