"""The report's Python pane with @triton.jit helpers (samples_sm90's bias_gelu_rowsum_kernel:
_load_tile, _gelu): the page's data holds the core's sections and ops in both charge modes
(irscope.core.user_functions), and in headless Chromium the pane shows a section per
helper, a click on a helper line lights its ops, and the switch moves the helpers' ops to
the kernel's call line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import irscope
from irscope.core.user_functions import CALL_LINE, OWN, function_line_ops, user_functions
from test_report import SAMPLES, _kernel_data, samples_report

CHROMIUM = "/usr/bin/chromium"
KERNEL = "bias_gelu_rowsum_kernel"


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    return samples_report(tmp_path_factory)


@pytest.fixture(scope="module")
def cap():
    with irscope.open(str(SAMPLES)) as b:
        yield b.capture(KERNEL)


def _page(report: Path, cap) -> Path:
    return report / f"kernel-1-{cap.id}.html"


def test_page_data_holds_the_core_s_sections_and_ops_in_both_modes(report, cap):
    data = _kernel_data(_page(report, cap))
    fns = data["functions"]["functions"]
    own = user_functions(cap, OWN)
    assert [(f["name"], f["file"], f["first_line"], f["last_line"]) for f in fns] == \
        [(f.name, f.file, f.first_line, f.last_line) for f in own.functions]
    assert fns[1]["lines"][0].startswith("def _load_tile(") and fns[2]["lines"][0].startswith("def _gelu(")
    for mode in (OWN, CALL_LINE):
        uf = user_functions(cap, mode)
        for fn in uf.functions:
            for ln in fn.lines:
                if ln.statement != ln.line:
                    continue
                want = function_line_ops(cap, fn, ln.line, mode)
                for stage, ops in data["functions"]["ops"][mode].items():
                    assert ops.get(f"{fn.index}:{ln.line}", []) == sorted({o.line for o in want[stage]}), \
                        (mode, fn.name, ln.line, stage)
    html = _page(report, cap).read_text(encoding="utf-8")
    assert 'id="charge-calls"' in html


def test_a_kernel_without_helpers_has_no_sections_and_no_switch(report):
    with irscope.open(str(SAMPLES)) as b:
        add = b.capture("add_kernel")
        data = _kernel_data(report / f"kernel-1-{add.id}.html")
        assert data["functions"] is None
        assert 'id="charge-calls"' not in (report / f"kernel-1-{add.id}.html").read_text(encoding="utf-8")


_HITS = "Object.fromEntries([...document.querySelectorAll('.stage-pane')].map(p => [p.dataset.stage, " \
        "[...p.querySelectorAll('.row.hit')].map(r => Number(r.dataset.line))]))"


def test_browser_shows_helper_sections_and_the_switch_moves_the_ops(report, cap):
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is absent (Debian's chromium package)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    own, charged = user_functions(cap, OWN), user_functions(cap, CALL_LINE)
    gelu = own.helpers[1]
    call = gelu.call_lines[0]
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        pg = browser.new_page(viewport={"width": 1500, "height": 1000})
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(_page(report, cap).as_uri())
        pg.wait_for_selector("body[data-ready]", timeout=60_000)
        assert pg.evaluate("document.body.dataset.ready") == "1", errors
        heads = pg.locator("#source .fn-head").all_text_contents()
        assert heads == [f"helper {h.name} · {h.file}:{h.first_line}-{h.last_line} · called at line {h.call_lines[0]}"
                         for h in own.helpers]
        assert pg.locator('#source .helper[data-fn="2"] .row').first.inner_text().find("def _gelu(") >= 0
        # a helper line lights its own ops
        last = gelu.last_line
        pg.locator(f'#source .row[data-fn="2"][data-line="{last}"]').click()
        want = {s: sorted({o.line for o in ops}) for s, ops in function_line_ops(cap, gelu, last).items()}
        assert pg.evaluate(_HITS) == want and all(want.values())
        count = pg.locator('.stage-pane[data-stage="ttgir"] .count').inner_text()
        assert f"{gelu.count(last, 'ttgir')} op(s) of _gelu line {last}" in count
        # the call line, own mode, then charged to it
        row = pg.locator(f'#source .row[data-fn="0"][data-line="{call}"]')
        row.click()
        assert len(pg.evaluate(_HITS)["ttgir"]) == own.kernel.count(call, "ttgir")
        before = row.locator(".ops").inner_text()
        pg.locator("#charge-calls").check()
        after_hits = pg.evaluate(_HITS)
        assert len(after_hits["ttgir"]) == charged.kernel.count(call, "ttgir") > own.kernel.count(call, "ttgir")
        assert int(row.locator(".ops").inner_text()) == sum(charged.kernel.count(call, s) for s in charged.stages) \
            > int(before)
        assert pg.locator(f'#source .row[data-fn="2"][data-line="{last}"] .ops').inner_text() == ""
        pg.locator("#charge-calls").uncheck()
        assert row.locator(".ops").inner_text() == before
        assert errors == []
        browser.close()
