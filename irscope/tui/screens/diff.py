"""The diff screen: two captures (or two passes) compared by the diff engine.

At the top, the summary: per stage, ops matched, added, removed, moved and changed,
and ops per dialect. Below, four tabs: the IR of one stage side by side (``s``
picks the stage), the metadata and resource deltas, the Python lines whose op counts
changed, and the pass pipeline's differences. Every figure comes from the
:class:`~irscope.diff.compare.Comparison`. The IR tab draws the change list
``irscope diff`` prints (:mod:`irscope.diff.change_list`: changes in order, unchanged
runs folded with their counts); ``n``/``N`` step through the changes, and the whole
texts (``texts``, or the two captures' stage texts) let a folded run be opened
(see :mod:`irscope.tui.widgets.diff_panes`). Stages are named by the registry's
display names.
"""

from __future__ import annotations

import os
from typing import ClassVar, Mapping

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static, TabbedContent, TabPane

from irscope.compiler.stages import SOURCE, display_name, highlight_language
from irscope.core import Capture
from irscope.errors import IrscopeError
from irscope.diff.change_list import change_list
from irscope.diff.compare import Comparison
from irscope.diff.dialect_counts import dialect_text
from irscope.diff.heat import LineHeatDelta
from irscope.diff.lines import LineDelta
from irscope.diff.metadata import FieldDelta
from irscope.tui.widgets.diff_panes import DiffPanes, status_text
from irscope.tui.widgets.ir_view import IRView
from irscope.tui.widgets.search_bar import SearchBar


def delta_text(d: FieldDelta) -> Text:
    """``+33 (1.19x)`` for numbers, '' otherwise."""
    if d.delta is None:
        return Text("")
    return Text(d.delta_text, style="green" if d.delta < 0 else "red" if d.delta > 0 else "dim")


def elide_common(a: str, b: str, keep: int = 16) -> tuple[str, str]:
    """Both labels with their long common prefix cut to ``…`` after a ``[`` or ``,``, so
    the part that differs (two configs of one kernel) fits on a narrow line."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    cut = max(a.rfind(",", 0, n), a.rfind("[", 0, n)) + 1
    if cut <= keep or a == b:
        return a, b
    head = a.find("[") + 1 if 0 < a.find("[") < cut else keep
    return a[:head] + "…" + a[cut:], b[:head] + "…" + b[cut:]


_TAB_FOCUS = {"tab-ir": "#pane-b", "tab-meta": "#diff-meta", "tab-lines": "#diff-lines", "tab-passes": "#diff-passes"}
"""What each tab focuses when a key shows it."""


def _count(n: int, style: str) -> Text:
    return Text(str(n), style=style if n else "dim", justify="right")


class DiffScreen(Screen):
    """A Comparison, browsable."""

    DEFAULT_CSS = """
    DiffScreen #diff-sides { height: 2; padding: 0 1; background: $boost; text-wrap: nowrap;
                             text-overflow: ellipsis; }
    DiffScreen #diff-summary { height: auto; max-height: 8; }
    DiffScreen #diff-notes { height: auto; padding: 0 1; color: $text-warning; }
    DiffScreen #diff-notes.-empty { display: none; }
    DiffScreen #stage-bar { height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    DiffScreen #diff-position { height: 1; padding: 0 1; background: $boost; text-wrap: nowrap;
                                text-overflow: ellipsis; }
    DiffScreen #change-detail { height: auto; max-height: 3; padding: 0 1; color: $text-muted; }
    DiffScreen TabbedContent { height: 1fr; }
    DiffScreen TabPane { padding: 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "next_stage", "Stage", id="diff.next_stage"),
        Binding("S", "previous_stage", "Prev stage", show=False, id="diff.previous_stage"),
        Binding("i", "tab('tab-ir')", "IR", id="diff.tab_ir"),
        Binding("m", "tab('tab-meta')", "Metadata", id="diff.tab_metadata"),
        Binding("l", "tab('tab-lines')", "Lines", id="diff.tab_lines"),
        Binding("p", "tab('tab-passes')", "Passes", show=False, id="diff.tab_passes"),
        Binding("a", "toggle_all_fields", "All fields", show=False, id="diff.all_fields"),
        Binding("n", "next_change", "Next change", id="diff.next_change"),
        Binding("N", "previous_change", "Prev change", show=False, id="diff.previous_change"),
        Binding("slash", "search", "Search", key_display="/", id="diff.search"),
        Binding("escape", "back", "Back", id="diff.back"),
    ]

    stage: reactive[str] = reactive("", init=False)
    """The stage shown in the IR tab."""
    all_fields: reactive[bool] = reactive(False, init=False)
    """The metadata tab lists every field (True) or only those that differ."""

    class StageShown(Message):
        """The IR tab shows ``stage`` (with ``changes`` changes of the engine's diff)."""

        def __init__(self, stage: str, changes: int, full_text: bool) -> None:
            super().__init__()
            self.stage = stage
            self.changes = changes
            self.full_text = full_text

    def __init__(self, comparison: Comparison, *, a: Capture | None = None, b: Capture | None = None,
                 texts: Mapping[str, tuple[str, str]] | None = None,
                 name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.comparison = comparison
        self._a, self._b = a, b
        self._texts = dict(texts or {})

    # -- layout ------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(self._sides_text(), id="diff-sides")
        yield DataTable(id="diff-summary", cursor_type="row", show_cursor=False)
        yield Static(Text("\n".join(self.comparison.notes)), id="diff-notes",
                     classes="" if self.comparison.notes else "-empty")
        with TabbedContent(initial="tab-ir"):
            with TabPane("IR", id="tab-ir"):
                yield Static(id="stage-bar")
                yield Static(id="diff-position")
                yield DiffPanes(id="diff-panes")
                yield Static(id="change-detail")
            with TabPane("Metadata", id="tab-meta"):
                yield DataTable(id="diff-meta", cursor_type="row")
            with TabPane("Python lines", id="tab-lines"):
                yield DataTable(id="diff-lines", cursor_type="row")
            with TabPane("Passes", id="tab-passes"):
                yield DataTable(id="diff-passes", cursor_type="row")
        yield SearchBar(id="search")
        yield Footer()

    def _sides_text(self) -> Text:
        a, b = elide_common(self.comparison.a, self.comparison.b)
        t = Text()
        t.append("A ", style="bold red")
        t.append(a)
        t.append("\nB ", style="bold green")
        t.append(b)
        return t

    def on_mount(self) -> None:
        self.title = "diff"
        self.sub_title = f"{len(self.comparison.stages)} stage(s) compared"
        self._fill_summary()
        self._fill_metadata()
        self._fill_lines()
        self._fill_passes()
        stages = self.stage_names
        if stages:
            # the first stage that changed, else the first
            changed = [s for s in stages if self.comparison.stages[s].changes]
            self.stage = (changed or stages)[0]
            # The keys a reader needs first (arrows, enter on a run) act on the change list.
            self.query_one("#pane-b", IRView).focus()
        else:
            self.query_one("#stage-bar", Static).update(Text("no IR stage in common"))

    @property
    def stage_names(self) -> list[str]:
        return list(self.comparison.stages)

    def _fill_summary(self) -> None:
        t = self.query_one("#diff-summary", DataTable)
        for col in ("stage", "matched", "+added", "-removed", ">moved", "~changed", "ops", "dialects"):
            t.add_column(col, key=col)
        for stage, d in self.comparison.stages.items():
            before, after = sum(d.ops_by_dialect_before.values()), sum(d.ops_by_dialect_after.values())
            t.add_row(Text(display_name(stage)), _count(d.matched, ""), _count(d.added, "green"),
                      _count(d.removed, "red"), _count(d.moved, "cyan"), _count(d.changed, "yellow"),
                      Text(f"{before} -> {after}", justify="right"),
                      Text(dialect_text(d.ops_by_dialect_before, d.ops_by_dialect_after)), key=stage)

    def metadata_rows(self) -> list[FieldDelta]:
        """The fields the metadata tab lists now."""
        return [d for d in self.comparison.metadata if d.changed or self.all_fields]

    def _fill_metadata(self) -> None:
        t = self.query_one("#diff-meta", DataTable)
        t.clear(columns=True)
        for col in ("field", "group", "A", "B", "delta"):
            t.add_column(col, key=col)
        rows = self.metadata_rows()
        for d in rows:
            style = "" if d.changed else "dim"
            t.add_row(Text(d.name, style=style), Text(d.group, style="dim"), Text(d.before_text, style=style),
                      Text(d.after_text, style=style), delta_text(d), key=d.name)
        if not rows:
            t.add_row(Text("no field differs" if self.comparison.metadata else "no metadata compared",
                           style="italic"), "", "", "", "")

    def _fill_lines(self) -> None:
        t = self.query_one("#diff-lines", DataTable)
        stages = list(dict.fromkeys(c.name for ln in self.comparison.lines for c in ln.counts))
        heat = self.comparison.heat  # both captures profiled: the measured samples beside the op change
        t.add_column("line", key="line")
        if heat is not None:
            t.add_column("samples A->B", key="samples")
        for s in stages:
            t.add_column(s, key=s)
        t.add_column(SOURCE, key=SOURCE)
        # lines of the kernel's file match the op counts' by number; a helper file's come after
        measured = {h.line: h for h in heat.lines if h.kernel_file} if heat is not None else {}
        listed = {ln.line for ln in self.comparison.lines}
        rows: list[LineDelta | LineHeatDelta] = sorted(
            [*self.comparison.lines, *(h for n, h in measured.items() if n not in listed)], key=lambda r: r.line)
        rows += [h for h in heat.lines if not h.kernel_file] if heat is not None else []
        for ln in rows:
            if heat is not None:
                h = ln if isinstance(ln, LineHeatDelta) else measured.get(ln.line)
                moved = 0.0 if h is None else h.share_after - h.share_before
                samples = [Text("" if h is None else f"{h.before}->{h.after}", justify="right",
                                style="red" if moved >= 0.02 else "green" if moved <= -0.02 else "")]
            else:
                samples = []
            if isinstance(ln, LineHeatDelta):  # measured, with no op count change
                where = str(ln.line) if ln.kernel_file else f"{os.path.basename(ln.file)}:{ln.line}"
                t.add_row(Text(where, justify="right"), *samples, *[Text("")] * len(stages),
                          Text((ln.text or "").strip()), key=where if ln.kernel_file else f"{ln.file}:{ln.line}")
                continue
            cells = []
            for s in stages:
                c = ln.count(s)
                if c is None:
                    cells.append(Text(""))
                elif c.changed:
                    cells.append(Text(f"{c.before}->{c.after}", style="red" if c.delta > 0 else "green"))
                else:
                    cells.append(Text(str(c.after), style="dim"))
            t.add_row(Text(str(ln.line), justify="right"), *samples, *cells, Text((ln.text or "").strip()),
                      key=str(ln.line))
        if not rows:
            t.add_row(Text("no Python line's op count changed", style="italic"),
                      *[""] * (len(stages) + 1 + (heat is not None)))

    def pipeline_rows(self) -> list[tuple[str, str, str, str]]:
        """(stage, what, pass, detail) of every pipeline difference, in stage order."""
        rows = []
        delta = self.comparison.passes
        for sd in delta.stages if delta is not None else ():
            for o in sd.removed:
                rows.append((sd.stage, "only in A", o.name, f"A #{o.index}"))
            for o in sd.added:
                rows.append((sd.stage, "only in B", o.name, f"B #{o.index}"))
            for r in sd.reordered:
                rows.append((sd.stage, "reordered", r.name, f"A #{r.index_before} -> B #{r.index_after}"))
            for e in sd.effect_changed:
                fx = [f"{'changed' if x.changed else 'no change'} +{x.added} -{x.removed} ~{x.modified} >{x.moved}"
                      for x in (e.before, e.after)]
                rows.append((sd.stage, "effect", e.name, f"{fx[0]} -> {fx[1]}"))
        return rows

    def _fill_passes(self) -> None:
        t = self.query_one("#diff-passes", DataTable)
        for col in ("stage", "difference", "pass", "detail"):
            t.add_column(col, key=col)
        rows = self.pipeline_rows()
        for stage, what, name, detail in rows:
            t.add_row(Text(stage), Text(what, style="yellow" if what == "effect" else "bold"), Text(name),
                      Text(detail, style="dim"))
        if not rows:
            t.add_row(Text("no pass snapshots compared" if self.comparison.passes is None
                           else "same passes, same order, same effect", style="italic"), "", "", "")

    # -- the IR tab --------------------------------------------------------------
    def texts_of(self, stage: str) -> tuple[str, str] | None:
        """Both sides' whole texts of ``stage``, when known."""
        if stage in self._texts:
            return self._texts[stage]
        if self._a is None or self._b is None:
            return None
        try:
            ta, tb = self._a.stage(stage).text, self._b.stage(stage).text
        except IrscopeError:  # a stage one side lacks: the changes-only view still works
            return None
        if not (isinstance(ta, str) and isinstance(tb, str)):
            return None
        self._texts[stage] = (ta, tb)
        return ta, tb

    def watch_stage(self, stage: str) -> None:
        d = self.comparison.stages.get(stage)
        if d is None:
            return
        texts = self.texts_of(stage)
        panes = self.query_one(DiffPanes)
        panes.show(change_list(d), texts, highlight_language(stage))
        bar = Text()
        for s in self.stage_names:
            bar.append(f" {display_name(s)} ", style="reverse bold" if s == stage else "")
        bar.append(f"   {len(d.changes)} change(s)", style="dim")
        if texts is None:
            bar.append("  (runs stay folded: the whole texts are not at hand)", style="dim")
        if d.note:
            bar.append(f"  {d.note}", style="yellow")
        self.query_one("#stage-bar", Static).update(bar)
        self._show_position()
        self.post_message(self.StageShown(stage, len(d.changes), texts is not None))

    def _show_position(self) -> None:
        panes = self.query_one(DiffPanes)
        self.query_one("#diff-position", Static).update(status_text(panes))
        text = Text()
        item = panes.change_at(panes.cursor_row)
        if item is not None:
            change = item.change
            text.append(f"{change.kind} {change.op}", style="bold")
            if change.python_line:
                text.append(f"  (Python line {change.python_line})", style="dim")
            if change.details:
                text.append("\n" + "; ".join(change.details))
        self.query_one("#change-detail", Static).update(text)

    @on(IRView.CursorMoved)
    def _cursor_moved(self, event: IRView.CursorMoved) -> None:
        if event.ir_view.id in ("pane-a", "pane-b"):
            self._show_position()

    @on(IRView.LineSelected)
    def _line_selected(self, event: IRView.LineSelected) -> None:
        if event.ir_view.id not in ("pane-a", "pane-b"):
            return
        panes = self.query_one(DiffPanes)
        row = panes.rows[event.line] if 0 <= event.line < len(panes.rows) else None
        if row is None or row.kind not in ("fold", "open-fold", "unchanged"):
            return
        if not panes.toggle_fold(event.line):
            self.notify("the whole texts are not at hand: this run stays folded", timeout=2)
        event.ir_view.focus()
        self._show_position()

    # -- actions -----------------------------------------------------------------
    def _cycle(self, step: int) -> None:
        stages = self.stage_names
        if not stages:
            return
        i = stages.index(self.stage) if self.stage in stages else 0
        self.stage = stages[(i + step) % len(stages)]
        self.action_tab("tab-ir")

    def action_next_stage(self) -> None:
        """Show the next stage in the IR tab."""
        self._cycle(1)

    def action_previous_stage(self) -> None:
        """Show the previous stage in the IR tab."""
        self._cycle(-1)

    def action_tab(self, tab: str) -> None:
        """Switch to a tab, and focus what it shows (a focused widget left in a hidden
        tab would switch the tabs back)."""
        self.query_one(TabbedContent).active = tab
        self.query_one(_TAB_FOCUS.get(tab, "#pane-b")).focus()

    def action_toggle_all_fields(self) -> None:
        """List every metadata field, or only those that differ."""
        self.all_fields = not self.all_fields

    def watch_all_fields(self, _: bool) -> None:
        self._fill_metadata()

    @on(DataTable.RowSelected, "#diff-summary")
    def _pick_stage(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value in self.comparison.stages:
            self.stage = event.row_key.value

    def action_next_change(self) -> None:
        """The next change (after a search: the next row it matches)."""
        self._step(1)

    def action_previous_change(self) -> None:
        """The previous change (after a search: the previous row it matches)."""
        self._step(-1)

    def _step(self, step: int) -> None:
        panes = self.query_one(DiffPanes)
        self.action_tab("tab-ir")
        if panes.hits():
            panes.goto_hit(step)
        elif not panes.goto_change(step):
            self.notify("no change in this stage", timeout=2)
        self._show_position()

    def action_search(self) -> None:
        """Search both sides' rows."""
        # (no focus move here: the search bar takes the focus at once)
        self.query_one(TabbedContent).active = "tab-ir"
        self.query_one(SearchBar).open(self.query_one("#pane-b", IRView).search_query)

    @on(SearchBar.Submitted)
    def _search(self, event: SearchBar.Submitted) -> None:
        panes = self.query_one(DiffPanes)
        hits = panes.search(event.query)
        panes.pane_b.focus()
        if event.query:
            self.notify(f"{len(hits)} row(s) match on side A or B"
                        + (" (n/N: next/previous; escape clears)" if hits else ""), timeout=3, markup=False)
        self._show_position()

    @on(SearchBar.Closed)
    def _search_closed(self) -> None:
        self.query_one(DiffPanes).pane_b.focus()

    def action_back(self) -> None:
        """Clear an active search, else back to the screen this one was opened from."""
        panes = self.query_one(DiffPanes)
        if panes.hits() or panes.pane_b.search_query:
            panes.search("")
            self._show_position()
            return
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
