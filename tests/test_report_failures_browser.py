"""A failed capture in the report, in a real browser (Debian's Chromium driven by
Playwright, pages opened from ``file://``), on tests/data/learner_sm90.irscope: the index
marks the failures in a status column that is on screen at 1400 px, with no horizontal
overflow; a failed kernel's page shows its failure panel (the telling lines, the stage,
the user's ``file:line``) and its link selects the line the error names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import irscope
from irscope.export.report import build_report

from conftest import DATA

CHROMIUM = "/usr/bin/chromium"
LEARNER = DATA / "learner_sm90.irscope"

if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is absent (Debian's chromium package): the browser tests need it",
                allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("learner") / "report"
    build_report([str(LEARNER)], str(out), command="irscope report learner_sm90.irscope -o report", pictures=False)
    return out


@pytest.fixture(scope="module")
def ids() -> dict[str, int]:
    with irscope.open(str(LEARNER)) as b:
        return {k: b.capture(k).id for k in ("frontend_kernel", "ptxas_kernel", "rmsnorm_kernel")}


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    context.close()


def _open(pg, path: Path) -> None:
    pg.goto(path.as_uri())
    pg.wait_for_selector("body[data-ready]", timeout=60_000)
    assert pg.evaluate("document.body.dataset.ready") == "1", pg.errors
    assert pg.errors == []


def _no_horizontal_overflow(pg) -> None:
    width, client = pg.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert width <= client == 1400


def test_index_marks_failures_in_a_visible_status_column(report, page):
    _open(page, report / "index.html")
    _no_horizontal_overflow(page)
    heads = page.evaluate("[...document.querySelectorAll('table.kernels thead th')].map(th => th.textContent)")
    assert heads[:2] == ["kernel", "status"]
    rows = page.evaluate("""[...document.querySelectorAll('table.kernels tbody tr')].map(tr => {
        const status = tr.querySelector('.status'); const r = status.getBoundingClientRect();
        return {kernel: tr.querySelector('a').textContent, failed: tr.classList.contains('failed'),
                status: status.textContent, right: r.right, width: r.width,
                why: (tr.querySelector('.why') || {}).textContent || null};
    })""")
    by = {r["kernel"]: r for r in rows if r["kernel"] != "_attn_fwd"}
    assert by["frontend_kernel"]["failed"] and by["frontend_kernel"]["status"] == "failed (frontend)"
    assert "NameError('undefined_name is not defined')" in by["frontend_kernel"]["why"]
    assert by["ptxas_kernel"]["failed"] and by["ptxas_kernel"]["status"] == "failed (cubin)"
    assert "PTX line 39" in by["ptxas_kernel"]["why"]
    assert not by["rmsnorm_kernel"]["failed"] and by["rmsnorm_kernel"]["status"] == "ok"
    assert all(0 < r["width"] and r["right"] <= 1400 for r in rows)  # on screen, not cut off


def test_failure_panel_shows_the_error_and_selects_the_users_line(report, page, ids):
    _open(page, report / f"kernel-1-{ids['frontend_kernel']}.html")
    _no_horizontal_overflow(page)
    panel = page.locator("#failure")
    assert panel.is_visible()
    assert "Compile failed in the frontend" in panel.locator("h2").inner_text()
    assert "bad_kernels.py:15" in panel.locator("h2").inner_text()
    telling = panel.locator("pre.telling").inner_text()
    assert "NameError('undefined_name is not defined')" in telling and "Traceback" not in telling
    panel.locator("a[data-jump-line]").click()
    selected = page.locator("#source .row.selected")
    assert selected.get_attribute("data-line") == "15" and "undefined_name" in selected.inner_text()
    assert "error-line" in (selected.get_attribute("class") or "")
    assert page.evaluate("location.hash") == "#line=15"


def test_ptxas_failure_panel_shows_the_ptx_line(report, page, ids):
    _open(page, report / f"kernel-1-{ids['ptxas_kernel']}.html")
    _no_horizontal_overflow(page)
    panel = page.locator("#failure")
    assert panel.is_visible() and "CUDA binary (cubin)" in panel.locator("h2").inner_text()
    telling = panel.locator("pre.telling").inner_text()
    assert "Not a name of any known instruction: 'bogus'" in telling and "Repro command" not in telling
    panel.locator("a[data-jump-stage]").click()
    row = page.locator('.stage-pane[data-stage="ptx"] .row.error-line')
    assert row.count() == 1 and row.get_attribute("data-line") == "39" and "bogus" in row.inner_text()
    assert row.is_visible()


def test_a_kernel_that_compiled_has_no_failure_panel(report, page, ids):
    _open(page, report / f"kernel-1-{ids['rmsnorm_kernel']}.html")
    assert page.locator("#failure").count() == 0
