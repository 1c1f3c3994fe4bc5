"""The ops of a Python line, one rule: a statement spanning lines owns the ops of all
its lines, shown on its first line, and ``show``, the core, the lineage, the app's
per-line index and the report's per-line data agree on it.

Unit tests of the statement map run on source written here; the end-to-end test
captures a small kernel with multi-line ``tl.load(`` / ``tl.sum(`` calls (compile-only).
"""

from __future__ import annotations

import json
import textwrap

import pytest

import irscope
from irscope.ir.python_lines import python_line
from irscope.ir.statements import Statement, statement_map

from conftest import irscope as run_cli
from setup_guard import setup_missing


def _map(src: str, first_line: int = 1):
    return statement_map(textwrap.dedent(src).lstrip("\n"), first_line)


# -- the statement map -------------------------------------------------------------

def test_multi_line_call_is_one_statement_on_its_first_line():
    m = _map('''
        def k(x_ptr, n):
            x = tl.load(
                x_ptr, mask=n > 0)
            y = x + 1
        ''', first_line=10)
    assert m.parsed
    assert m.statement(11) == m.statement(12) == Statement(11, 12, (11, 12))
    assert m.head(12) == 11 and m.head(11) == 11
    assert m.statement(13) == Statement(13, 13, (13,))
    assert m.spanning() == {12: 11}


def test_multi_line_for_header_is_one_unit_and_its_body_is_not():
    m = _map('''
        def k(a, K):
            acc = 0
            for k in range(0,
                           K, 4):
                acc += tl.load(a +
                               k)
                acc += 1
            return acc
        ''')
    assert m.statement(3).lines == (3, 4) and m.head(4) == 3
    assert m.statement(5).lines == (5, 6) and m.head(6) == 5
    assert m.statement(7).lines == (7,)
    assert m.statement(8).lines == (8,)
    # the def's header is its own unit, not the whole function
    assert m.statement(1).lines == (1,)


def test_nested_with_and_if_take_their_lines_back_from_the_parent():
    m = _map('''
        def k(p, q):
            with ctx(p,
                     q):
                if (p >
                        q):
                    r = f(p)
                elif q:
                    r = g(
                        q)
                else:
                    r = 0
            return r
        ''')
    assert m.statement(2).lines == (2, 3)
    assert m.statement(5).lines == (4, 5) and m.head(5) == 4
    assert m.statement(6).lines == (6,)
    assert m.statement(7).lines == (7,)  # elif: a nested if of its own
    assert m.statement(9).lines == (8, 9)
    # ``else:`` belongs to no statement: the line alone
    assert m.statement(10) == Statement(10, 10, (10,)) and 10 not in m.of_line
    assert m.statement(11).lines == (11,)


def test_decorators_comments_and_blank_lines_map_to_themselves():
    m = _map('''
        @triton.jit
        @other(1,
               2)
        def k(x_ptr,  # the input
              # a comment line inside the signature
              n):

            # a comment
            x = tl.load(x_ptr +
                        # between the arguments
                        n)
        ''')
    for line in (1, 2, 3, 5, 7, 8, 10):
        assert line not in m.of_line, line
        assert m.statement(line) == Statement(line, line, (line,))
    assert m.statement(4).lines == (4, 6)
    assert m.statement(11).lines == (9, 11) and m.head(11) == 9


def test_backslash_continuation_and_multi_line_string():
    m = _map('''
        def k(a, b):
            """A docstring
            over two lines."""
            c = a + \\
                b
            return c
        ''')
    assert m.statement(2).lines == (2, 3)
    assert m.statement(5).lines == (4, 5) and m.head(5) == 4


def test_an_indented_function_parses_with_its_numbering():
    m = statement_map("    def k(a):\n        b = f(\n            a)\n        return b\n", 40)
    assert m.parsed and m.statement(42).lines == (41, 42) and m.head(43) == 43


@pytest.mark.parametrize("src", [None, "", "def k(:\n    x = tl.load(\n        p)\n", "x = (\x00)\n"])
def test_missing_or_unparsable_source_is_the_identity(src):
    m = statement_map(src, 5)
    assert not m.parsed and not m.of_line
    assert m.statement(6) == Statement(6, 6, (6,)) and m.head(7) == 7


def test_the_core_reports_the_span_on_a_checked_in_capture():
    from conftest import DATA

    with irscope.open(str(DATA / "samples_sm90.irscope")) as b:
        for cap in b.captures():
            for unit in cap.statements.statements():
                if not unit.spans:
                    continue
                at = cap.ops_at_line(unit.last)
                assert (at.first_line, at.last_line, at.lines) == (unit.first, unit.last, unit.lines)
                assert at == cap.ops_at_line(unit.first)
                by_line = {s: cap.ops_by_line(s).get(unit.first, []) for s in at}
                assert {s: [o.line for o in ops] for s, ops in at.items()} == \
                       {s: [o.line for o in ops] for s, ops in by_line.items()}


# -- end to end, on a real capture ------------------------------------------------------

KERNEL = '''import torch, triton, triton.language as tl
DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def multi_kernel(x_ptr, w_ptr, out_ptr, n,
                 BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(
        x_ptr + offs, mask=m, other=0.0)
    w = tl.load(w_ptr + offs,
                mask=m, other=0.0)
    s = tl.sum(x * w,
               axis=0)
    tl.store(out_ptr + offs, x + s, mask=m)


x = torch.zeros(256, device=DEVICE)
multi_kernel[(2,)](x, x, x, 256, BLOCK=128)
'''
LOAD = 11
"""``x = tl.load(`` : Triton puts the load on the argument line, 12."""


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    d = tmp_path_factory.mktemp("python_line_rule")
    script = d / "multi.py"
    script.write_text(KERNEL)
    out = d / "b.irscope"
    run_cli("run", script, "-o", out, "-q", "--no-open", check=True)
    return out


def _lines(ops) -> list[int]:
    return [op.line for op in ops]


@pytest.mark.slow
def test_first_line_of_a_multi_line_load_holds_its_ops_in_every_view(captured, tmp_path):
    from irscope.export.lineage import lineage_graph
    from irscope.export.report.collect import source_view, stage_texts
    from irscope.tui.screen_data import index_stage

    with irscope.open(str(captured)) as b:
        cap = b.capture("multi_kernel")
        file = cap.row.file
        at = cap.ops_at_line(LOAD)
        assert (at.first_line, at.last_line) == (LOAD, LOAD + 1)
        assert at["ttgir"] and any(op.name == "tt.load" for op in at["ttgir"])
        # What makes the rule needed: by the innermost frame alone, the first line is empty.
        innermost = {python_line(op.location, file) for op in at["ttgir"]}
        assert LOAD not in innermost and LOAD + 1 in innermost
        assert _lines(cap.ops_at_line(LOAD + 1)["ttgir"]) == _lines(at["ttgir"])

        # show --json, on the first line and on the argument line
        for asked in (LOAD, LOAD + 1):
            shown = json.loads(run_cli("show", captured, "multi_kernel", "--line", asked, "--json",
                                       check=True).stdout)
            assert (shown["line"], shown["first_line"], shown["last_line"]) == (asked, LOAD, LOAD + 1)
            assert shown["statement_source"][0].strip() == "x = tl.load("
            assert {s: [o["line"] for o in ops] for s, ops in shown["stages"].items()} == \
                   {s: _lines(ops) for s, ops in at.items()}

        # the lineage draws the same ops
        g = lineage_graph(cap, LOAD).graph
        drawn = {(a["stage"], a["line"]) for _, a in g.nodes(data=True) if a.get("kind") == "op"}
        assert drawn == {(s, op.line) for s, ops in at.items() for op in ops}
        assert g.nodes["python"]["label"][0] == "Python lines 11-12"

        # the app's per-line index: the count sits on the first line, none on the second
        for s, ops in at.items():
            index = index_stage(cap, s)
            assert _lines(index.by_python_line.get(LOAD, [])) == _lines(ops)
            assert index.count(LOAD) == len(ops) and index.count(LOAD + 1) == 0

        # the report's per-line data, and its map of continuation lines
        for st in stage_texts(cap):
            assert st.line_ops.get(LOAD, []) == sorted({op.line for op in at[st.name]})
            assert LOAD + 1 not in st.line_ops
        view = source_view(cap)
        assert view is not None and view.statement_of[LOAD + 1] == LOAD

        # the op graph export labels them with the first line too, and --lines 11-11 keeps them
        from irscope.export.opgraph import stage_graph

        nodes = {a["line"]: a for _, a in stage_graph(cap, "ttgir", max_nodes=0).graph.nodes(data=True)
                 if a.get("kind") == "op"}
        assert {nodes[op.line]["python_line"] for op in at["ttgir"]} == {LOAD}
        kept = {a["line"] for _, a in stage_graph(cap, "ttgir", lines=(LOAD, LOAD), max_nodes=0).graph.nodes(data=True)
                if a.get("kind") == "op"}
        assert {op.line for op in at["ttgir"]} <= kept

        # the same for the multi-line tl.sum
        total = cap.ops_at_line(15)
        assert total.lines == (15, 16) and any(op.name == "tt.reduce" for op in total["ttgir"])


@pytest.mark.slow
def test_the_app_marks_the_statement_and_counts_it_on_any_of_its_lines(captured):
    from irscope.tui.app import make_app
    from irscope.tui.screens.kernel import KernelScreen
    from irscope.tui.widgets.ir_view import IRView
    from irscope.tui.widgets.stage_tabs import StageTabs
    from tui_support import run_async

    async def go() -> None:
        with irscope.open(str(captured)) as b:
            cap = b.capture("multi_kernel")
            want = cap.ops_at_line(LOAD)
            app = make_app(b, "multi_kernel", keymap={})
            async with app.run_test(size=(140, 40)) as pilot:
                for _ in range(3):
                    await app.workers.wait_for_complete()
                    await pilot.pause()
                screen = app.screen
                assert isinstance(screen, KernelScreen)
                src = screen.query_one("#source", IRView)
                for asked in (LOAD, LOAD + 1):  # the first line and the argument line alike
                    src.focus()
                    src.goto_line(asked - screen.first_line)
                    for _ in range(3):
                        await app.workers.wait_for_complete()
                        await pilot.pause()
                    assert screen.python_line == asked
                    assert set(src.marks) == {LOAD - screen.first_line, LOAD + 1 - screen.first_line}
                    view = screen.query_one("#stage", IRView)
                    assert view.marks == {op.line - 1: "linked" for op in want[screen.stage]}
                    tabs = screen.query_one(StageTabs)
                    for stage in screen.stages:
                        assert tabs.count(stage) == len(want.get(stage, [])), stage
                # a one-line statement clears the source marks
                src.goto_line(LOAD + 6 - screen.first_line)  # tl.store(...), one line
                await pilot.pause()
                assert not src.marks

    run_async(go)()


@pytest.mark.slow
def test_the_report_page_selects_the_statement_from_any_of_its_lines(captured, tmp_path):
    import os

    if not os.path.exists("/usr/bin/chromium"):
        setup_missing(
            "/usr/bin/chromium is absent (Debian's chromium package): run scripts/setup.sh")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    out = tmp_path / "report"
    run_cli("report", captured, "-o", out, check=True)
    with irscope.open(str(captured)) as b:
        cap = b.capture("multi_kernel")
        want = {s: sorted({op.line for op in ops}) for s, ops in cap.ops_at_line(LOAD).items()}
        page_file = out / f"kernel-1-{cap.id}.html"
    hits = ("Object.fromEntries([...document.querySelectorAll('.stage-pane')].map(p => [p.dataset.stage, "
            "[...p.querySelectorAll('.row.hit')].map(r => Number(r.dataset.line))]))")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(page_file.as_uri())
            page.wait_for_selector("body[data-ready]", timeout=60_000)
            row = '#source .row[data-line="{}"] .ops'
            assert page.locator(row.format(LOAD)).text_content() == str(sum(len(v) for v in want.values()))
            assert page.locator(row.format(LOAD + 1)).text_content() == ""
            for clicked in (LOAD + 1, LOAD):
                page.locator(f'#source .row[data-line="{clicked}"]').click()
                assert page.evaluate(hits) == want and all(want.values())
                selected = page.locator("#source .row.selected")
                assert sorted(selected.nth(i).get_attribute("data-line") for i in range(selected.count())) == \
                       [str(LOAD), str(LOAD + 1)]
                assert page.url.endswith(f"#line={LOAD}")
            assert errors == []
        finally:
            browser.close()


def test_the_def_line_is_triton_s_even_when_the_file_cannot_be_read_again(tmp_path, monkeypatch):
    """The stored source must start at the line Triton counts its locations from. An
    Inductor kernel has many decorator lines, and its file cannot always be read
    again when it compiles: the def line then comes from Triton's own numbers."""
    import importlib.util
    import inspect
    from types import SimpleNamespace

    from irscope.capture.child.irscope_child_source import source_info

    path = tmp_path / "decorated.py"
    path.write_text("import triton\nimport triton.language as tl\n\n\n"
                    "@triton.heuristics(\n    values={\n        'B': lambda args: 16,\n    }\n)\n"
                    "@triton.jit\ndef k(x_ptr, B: tl.constexpr):\n    tl.store(x_ptr, 1)\n")
    spec = importlib.util.spec_from_file_location("decorated_kernel", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    src = SimpleNamespace(fn=mod.k.fn, name="k")  # as an ASTSource holds it: the JIT function
    assert source_info(src)["first_line"] == 11
    monkeypatch.setattr(inspect, "getsourcelines", lambda *a: (_ for _ in ()).throw(OSError("gone")))
    got = source_info(src)
    assert got["first_line"] == 11 and got["source"].startswith("def k(")
