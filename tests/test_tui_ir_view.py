"""IRView: virtual rendering, cursor, marks, search and highlighting on real captured IR."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from irscope.core import open_bundle
from irscope.tui.widgets.highlight import tokenize
from irscope.tui.widgets.ir_view import IRView

from conftest import DATA
from tui_support import run_async

BUNDLE = DATA / "samples_sm90.irscope"


@pytest.fixture(scope="module")
def matmul():
    with open_bundle(str(BUNDLE)) as b:
        cap = b.capture("matmul_kernel")
        yield {s: cap.stage(s).text for s in ("ttgir", "llir", "ptx", "sass") if s in cap.stages} | {
            "python": cap.source.text}


class Harness(App):
    def __init__(self, text: str, language: str | None):
        super().__init__()
        self._text, self._language = text, language

    def compose(self) -> ComposeResult:
        yield IRView(self._text, language=self._language, id="view")


def _messages(log):
    """The IRView messages, once each (the hook sees a message at every pump it bubbles to)."""
    seen, out = set(), []
    for m in log:
        if isinstance(m, (IRView.CursorMoved, IRView.LineSelected)) and id(m) not in seen:
            seen.add(id(m))
            out.append(m)
    return out


@run_async
async def test_big_pane_renders_only_visible_lines(matmul):
    text = matmul["llir"] * 25  # ~50,000 lines of real LLVM IR
    app = Harness(text, "llvm")
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(IRView)
        assert view.line_count == len(text.splitlines()) >= 40_000
        assert view.virtual_size.height == view.line_count
        view.focus()
        await pilot.press("end")
        await pilot.pause()
        assert view.cursor_line == view.line_count - 1
        # Only what was on screen was highlighted: the first and the last page.
        assert len(view._strip_cache) <= 2 * view.size.height + 2
        rows = [view.render_line(y).text for y in range(view.scrollable_content_region.height)]
        assert rows[-1].startswith(str(view.line_count))  # the last line is the last row
        assert view.line_text(view.line_count - 1)[:40] in rows[-1]


@run_async
async def test_cursor_keys_and_messages(matmul):
    log = []
    app = Harness(matmul["ttgir"], "mlir")
    async with app.run_test(size=(100, 20), message_hook=log.append) as pilot:
        view = app.query_one(IRView)
        view.focus()
        await pilot.press("down", "down", "up")
        assert view.cursor_line == 1
        await pilot.press("pagedown")
        assert view.cursor_line > 10
        assert view.scroll_offset.y > 0  # the cursor stays in view
        await pilot.press("home", "enter")
        await pilot.pause()
        got = _messages(log)
        moved = [m.line for m in got if isinstance(m, IRView.CursorMoved)]
        assert moved[:3] == [1, 2, 1] and moved[-1] == 0
        selected = [m for m in got if isinstance(m, IRView.LineSelected)]
        assert [m.line for m in selected] == [0] and selected[0].control is view


@run_async
async def test_click_selects_the_line_under_the_mouse(matmul):
    log = []
    app = Harness(matmul["ptx"], "ptx")
    async with app.run_test(size=(100, 20), message_hook=log.append) as pilot:
        view = app.query_one(IRView)
        view.goto_line(100, center=False)
        await pilot.pause()
        top = round(view.scroll_offset.y)
        await pilot.click(IRView, offset=(10, 3))
        await pilot.pause()
        assert view.cursor_line == top + 3
        assert [m.line for m in _messages(log) if isinstance(m, IRView.LineSelected)] == [top + 3]


@run_async
async def test_marks_draw_signs_and_repaint_only_changed_lines(matmul, monkeypatch):
    app = Harness(matmul["ttgir"], "mlir")
    async with app.run_test(size=(100, 20)) as pilot:
        view = app.query_one(IRView)
        view.set_marks({2: "added", 3: "removed", 4: "changed", 5: "linked"})
        await pilot.pause()
        gutter = [view.render_line(y).text[: view._gutter_width] for y in range(2, 7)]
        assert [g[-2] for g in gutter] == ["+", "-", "~", ">", " "]
        refreshed = []
        monkeypatch.setattr(view, "refresh_lines", lambda y, n=1: refreshed.append(y))
        view.set_marks({2: "added", 3: "removed", 4: "linked", 9: "hit"})
        assert sorted(refreshed) == [4, 5, 9]
        assert view.marks == {2: "added", 3: "removed", 4: "linked", 9: "hit"}


@run_async
async def test_search_next_previous_wrap_and_smart_case(matmul):
    app = Harness(matmul["ttgir"], "mlir")
    async with app.run_test(size=(100, 20)) as pilot:
        view = app.query_one(IRView)
        lines = matmul["ttgir"].splitlines()
        expected = [i for i, line in enumerate(lines) if "ttng.warp_group_dot" in line.lower()]
        assert expected, "the sm_90 matmul TTGIR has a wgmma dot"
        assert view.search("TTNG.WARP_GROUP_DOT") == 0  # a capital makes it case-sensitive
        assert view.search("ttng.warp_group_dot") == len(expected)
        assert view.cursor_line == expected[0]
        for want in expected[1:] + expected[:1]:  # wraps to the first
            assert view.next_hit()
            assert view.cursor_line == want
        assert view.previous_hit()
        assert view.cursor_line == expected[-1]
        await pilot.pause()
        assert view.search("") == 0 and not view.next_hit()


@run_async
async def test_text_is_never_markup():
    text = "[bold red]not markup[/]\n%0 = [link=x]y[/link]\n"
    app = Harness(text, "mlir")
    async with app.run_test(size=(60, 5)) as pilot:
        await pilot.pause()
        view = app.query_one(IRView)
        assert "[bold red]not markup[/]" in view.render_line(0).text
        assert "[link=x]y[/link]" in view.render_line(1).text


@run_async
async def test_set_text_resets_cursor_marks_and_search(matmul):
    app = Harness(matmul["ttgir"], "mlir")
    async with app.run_test(size=(100, 20)) as pilot:
        view = app.query_one(IRView)
        view.goto_line(30)
        view.set_marks({1: "added"})
        view.search("tt.load")
        view.set_text(matmul["ptx"], language="ptx")
        await pilot.pause()
        assert (view.cursor_line, view.marks, view.search_query, view.language) == (0, {}, "", "ptx")
        assert view.line_count == len(matmul["ptx"].splitlines())


def _kinds(line, language):
    return {line[t.start:t.end]: t.kind for t in tokenize(line, language)}


def test_tokenizers_on_real_lines(matmul):
    mlir = next(line for line in matmul["ttgir"].splitlines() if "ttng.warp_group_dot " in line)
    got = _kinds(mlir, "mlir")
    assert got.get("ttng.warp_group_dot") == "op" and any(k.startswith("%") and v == "value" for k, v in got.items())
    llvm = next(line for line in matmul["llir"].splitlines() if line.startswith("define"))
    got = _kinds(llvm, "llvm")
    assert got["define"] == "keyword" and any(k.startswith("@") for k in got)
    ptx = next(line for line in matmul["ptx"].splitlines() if "mov.u32" in line or "mov.b32" in line)
    assert any(v == "register" for v in _kinds(ptx, "ptx").values())
    py = _kinds("    acc = tl.dot(a, b, acc)  # tl.dot here", "python")
    assert py["tl.dot"] == "op" and py["# tl.dot here"] == "comment"
    assert _kinds("def f(BLOCK: tl.constexpr):", "python")["tl.constexpr"] == "type"
    assert tokenize("anything", None) == [] and tokenize("anything", "cobol") == []
    if "sass" in matmul and isinstance(matmul["sass"], str):
        sass = next(line for line in matmul["sass"].splitlines() if "/*0" in line)
        assert "comment" in _kinds(sass, "sass").values()
