"""The report's "What if" section: the ablation table attached to a capture, its rows
as the core reads them, every string from the bundle escaped; no section without one."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest

import irscope
from conftest import DATA
from irscope.compiler.stages import TTGIR
from irscope.core.experiments import Ablation, ablation_row, figures_of, ranked
from irscope.export.report.build import build_report
from irscope.whatif.ablate import save_ablation

LOOPS = DATA / "why_loops.irscope"
LEARNER = DATA / "learner_sm90.irscope"
HOSTILE = "<img src=x onerror=alert(1)>"


def _find(bundle, kernel: str, target: str, stages: str):
    return next(c for c in bundle.captures(kernel) if c.target == target and f"num_stages={stages}" in c.variant)


@pytest.fixture(scope="module")
def ablated(tmp_path_factory) -> tuple[Path, Ablation]:
    """A copy of why_loops with an ablation table attached to the pipelined sm_80 GEMM:
    rows made from real captures (an unpipelined compile, a failed one, the same one
    under a hostile pass name)."""
    folder = tmp_path_factory.mktemp("whatif")
    bundle = folder / "loops.irscope"
    shutil.copy(LOOPS, bundle)
    with irscope.open(str(bundle)) as b, irscope.open(str(LEARNER)) as learner:
        piped = _find(b, "gemm_kernel", "sm_80", "3")
        plain = _find(b, "gemm_kernel", "sm_80", "1")
        rows = [ablation_row("tritongpu-pipeline", piped, plain), ablation_row(HOSTILE, piped, piped),
                ablation_row("allocate-shared-memory-nv", piped, learner.capture("ptxas_kernel"), stage="llir")]
        table = Ablation(piped.kernel, piped.target, piped.variant, piped.id, "loops.ablate.irscope", TTGIR, "ttir",
                         figures_of(piped), ranked(rows), control=ablation_row("", piped, piped),
                         triton_version=piped.triton_version, notes=(f"a note {HOSTILE}",))
    save_ablation(str(bundle), table)
    return bundle, table


def _report(bundle: Path, out: Path, stages: str) -> str:
    build_report([str(bundle)], str(out), command="irscope report", pictures=False, kernel="gemm_kernel",
                 target="sm_80", variant=f"num_stages={stages}")
    (page,) = sorted(out.glob("kernel-*.html"))
    return page.read_text(encoding="utf-8")


def test_the_ablation_table_is_on_its_capture_page(ablated, tmp_path):
    bundle, table = ablated
    page = _report(bundle, tmp_path / "report", "3")
    section = page[page.index('<section id="whatif">'):]
    section = section[:section.index("</section>")]
    rows = re.findall(r'<tr[^>]*data-pass="([^"]*)"[^>]*>(.*?)</tr>', section)
    assert [html.unescape(p) for p, _ in rows] == ["", *(r.pass_name for r in table.rows)]
    by_pass = {html.unescape(p): cells for p, cells in rows}
    failed = by_pass["allocate-shared-memory-nv"]
    assert "failed at cubin" in failed and "PTXASError" in failed and "(llir)" in failed
    piped = table.row("tritongpu-pipeline")
    effects = dict(re.findall(r'data-pass="([^"]*)" data-effect="([^"]*)"', section))
    assert float(effects["tritongpu-pipeline"]) == pytest.approx(piped.effect, abs=1e-4)
    assert f'<td class="changed" title="original: {table.baseline.async_copies}">0</td>' in by_pass["tritongpu-pipeline"]
    assert "no effect" in by_pass[HOSTILE]  # the same compile as the original
    assert "<td>ok</td>" in by_pass[""] and "<td>0.000</td>" in by_pass[""]  # the control: the yardstick


def test_every_string_from_the_table_is_escaped(ablated, tmp_path):
    bundle, _ = ablated
    page = _report(bundle, tmp_path / "report", "3")
    assert HOSTILE not in page
    assert html.escape(HOSTILE) in page and html.escape(f"a note {HOSTILE}") in page


def test_no_section_without_an_ablation(ablated, tmp_path):
    bundle, _ = ablated
    page = _report(bundle, tmp_path / "report", "1")
    assert 'id="whatif"' not in page


SAMPLES = DATA / "samples_sm90.irscope"


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """A copy of the sample bundle holding a tune table of matmul_kernel whose rows are
    its four captured configurations (real compiles), and one that failed."""
    from irscope.core.experiments import TUNE
    from irscope.core.tune_table import TuneTable, tune_row
    from irscope.core.variant import Variant
    from irscope.store.attachments import add_attachment
    from irscope.store.bundle import Bundle as StoreBundle

    folder = tmp_path_factory.mktemp("tune")
    bundle = folder / "s.irscope"
    shutil.copy(SAMPLES, bundle)
    keys = ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "num_warps")
    with irscope.open(str(bundle)) as b:
        caps = b.captures("matmul_kernel")
        rows = [tune_row({k: Variant(c.variant).int_value(k) for k in keys}, c.target, c) for c in caps]
        rows.append(tune_row({"BLOCK_SIZE_M": 512, "BLOCK_SIZE_N": HOSTILE, "num_warps": 4}, "sm_90", None,
                             error=f"out of resources {HOSTILE}\nsecond line"))
        grid = tuple((k, tuple(dict.fromkeys(r.config[k] for r in rows))) for k in keys)
        table = TuneTable("matmul_kernel", caps[0].variant, caps[0].id, ".", ".", grid, ("sm_90",), tuple(rows),
                          caps[0].triton_version)
    store = StoreBundle.open(str(bundle), create=True)
    try:
        add_attachment(store, TUNE, caps[0].id, "matmul_kernel tune", table.to_json())
    finally:
        store.close()
    return bundle, table


def test_the_index_shows_the_tune_table_with_links_to_each_configuration(tuned, tmp_path):
    bundle, table = tuned
    out = tmp_path / "report"
    build_report([str(bundle)], str(out), command="irscope report", pictures=False)
    index = (out / "index.html").read_text(encoding="utf-8")
    section = index[index.index('<section id="whatif-tune">'):]
    section = section[:section.index("</section>")]
    rows = re.findall(r'<tr[^>]*data-config="([^"]*)"[^>]*>(.*?)</tr>', section)
    assert [html.unescape(c) for c, _ in rows] == [r.label for r in table.rows]
    for (_, cells), r in zip(rows, table.rows):
        if r.compiled:
            link = re.search(r'<a href="(kernel-[^"]+\.html)">', cells).group(1)
            assert f"#{r.capture_id}</dd>" in (out / link).read_text(encoding="utf-8")  # its capture's page
            assert f"<td>{r.figures.registers}</td>" in cells
        else:
            assert "<a " not in cells and "failed" in cells and "second line" not in cells
    assert HOSTILE not in index and html.escape(HOSTILE) in index


def test_no_tune_section_for_another_kernel(tuned, tmp_path):
    bundle, _ = tuned
    out = tmp_path / "report"
    build_report([str(bundle)], str(out), command="irscope report", pictures=False, kernel="add_kernel")
    assert 'id="whatif-tune"' not in (out / "index.html").read_text(encoding="utf-8")
