"""The kernel view: the Python source beside the stage pane, linked line by line.

Moving over a Python line marks its ops in the stage pane and titles each stage tab with
that line's op count (a line stands for its whole statement, by the core's rule: every
line of ``x = tl.load(\\n    ptr)`` shows the statement's ops, and the source pane marks
the statement's lines); enter on an op shows its details (types, layout and a warp/lane
grid, location chain, the pass that made it, what it became); ``]``/``[`` jump to the
linked op in the next/previous stage, and the Python pane follows. ``v`` splits the pane
into two stages with linked highlights. Those three are in :mod:`irscope.tui.kernel_links`,
the focus, escape and pane widths in :mod:`irscope.tui.kernel_nav` (the screen's bases).

Stage texts are read and parsed in thread workers when first shown, so the UI thread
never waits on the bundle or the parser; the other stages are indexed in the
background afterwards, for the tab counts.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Header, Static, Tabs

from irscope.tui import screen_data
from irscope.tui.kernel_links import KernelLinks
from irscope.tui.screen_data import StageIndex
from irscope.tui.widgets.ir_view import IRView
from irscope.tui.widgets.error_panel import JUMP_KEY, ErrorPanel
from irscope.tui.widgets.heat import heat_status, op_heat_status, stage_heat
from irscope.tui.widgets.op_details import OpDetails
from irscope.tui.widgets.python_pane import PythonPane
from irscope.tui.widgets.why_panel import WhyPanel
from irscope.tui.widgets.search_bar import SearchBar
from irscope.tui.widgets.status_line import StatusLine
from irscope.tui.widgets.stage_tabs import StageTabs, tab_title, view_stages
from irscope.compiler.stages import ERROR, LLIR, PTX, SOURCE, TTGIR, TTIR, highlight_language

if TYPE_CHECKING:
    from irscope.core import Capture
    from irscope.tui.app import IrscopeApp
    from irscope.ir import Op

NARROW_WIDTH = 110
"""Below this many columns the panes stack (source above stages) instead of side by side."""


class KernelScreen(KernelLinks):
    """One capture: source, stages, op details, split view."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="kernel.back"),
        Binding("t", "next_stage_tab", "Next stage tab", id="kernel.next_tab"),
        Binding("T", "previous_stage_tab", "Previous stage tab", show=False,
                id="kernel.previous_tab"),
        Binding("v", "toggle_split", "Split", id="kernel.split"),
        Binding("right_square_bracket", "jump_next", "Jump next stage", key_display="]",
                id="kernel.jump_next"),
        Binding("left_square_bracket", "jump_previous", "Jump previous stage", key_display="[",
                id="kernel.jump_previous"),
        Binding("i", "toggle_details", "Details", id="kernel.details"),
        Binding(JUMP_KEY, "error_line", "Go to the error's line", show=False, id="kernel.error_line"),
        Binding("p", "passes", "Passes", id="kernel.passes"),
        Binding("slash", "search", "Search", key_display="/", id="kernel.search"),
        Binding("n", "next_hit", "Next hit", show=False, id="kernel.next_hit"),
        Binding("c", "toggle_charge", "Helpers to call line", show=False, id="kernel.charge"),
        Binding("N", "previous_hit", "Previous hit", show=False, id="kernel.previous_hit"),
        Binding("w", "toggle_why", "Why", id="kernel.why"),
        Binding("h", "toggle_heat", "Heat or static costs", show=False, id="kernel.heat"),
        Binding("R", "replay", "Replay with...", show=False, id="kernel.replay"),
    ]

    def __init__(self, capture: "Capture", *, line: int | None = None) -> None:
        super().__init__()
        self.capture = capture
        self.stages = view_stages(capture.stages)
        """The stages shown as tabs, in pipeline order."""
        self.stage = self.stages[0] if self.stages else None
        """The stage shown in the main stage pane."""
        self.split = False
        self._indexer = screen_data.StageIndexes(capture)
        self.indexes: dict[str, StageIndex] = {}
        """Stage -> its parsed index, filled by the workers."""
        self._texts: dict[str, str] = {}
        self._start_line = line
        self._detail = None
        self._search_target: IRView | None = None
        self._holds: dict[str, str | None] = {"#stage": None, "#stage2": None}
        """Pane id -> the stage whose text it holds."""
        self._linked_marks: dict[int, str] = {}
        self._no_follow = False
        self._jumping = False
        """Split pane marks of the ops linked to the op under the main pane's cursor."""
        src = capture.source
        self.first_line = src.first_line or 1
        """File line number of the source pane's first line."""
        self.source_text = src.text or ""

    # -- layout ------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Horizontal(id="kernel-panes"):
            with Vertical(id="source-pane"):
                yield Static(Text(self._source_title(), no_wrap=True, overflow="ellipsis"),
                             id="source-title", classes="pane-title")
                pane = PythonPane(self.capture, self.source_text or "(the capture holds no Python source)",
                                  language=highlight_language(SOURCE), id=SOURCE, first_number=self.first_line)
                yield pane
                yield WhyPanel(pane, id="why")  # w: the cursor line's facts (irscope explain's)
            with Vertical(id="stage-pane"):
                if self.capture.failure is not None:  # a failed compile: its error first
                    yield ErrorPanel(self.capture.failure, has_ptx=PTX in self.stages, alone=not self.stages,
                                     everything=shlex.join(["irscope", "cat", str(self.capture.bundle.path),
                                                            f"#{self.capture.id}", "--stage", ERROR]),
                                     id="error-panel")
                yield StageTabs(self.stages, id="stage-tabs")
                with Horizontal(id="stage-views"):
                    yield IRView("", id="stage")
                    yield IRView("", id="stage2")
                yield OpDetails(id="details")
        # Under both panes, the whole width: it names the focused pane first.
        yield StatusLine(id="stage-status", classes="pane-status")
        yield SearchBar(id="search")
        yield Footer()

    def _source_title(self) -> str:
        file = self.capture.file or "?"
        return f"{self.capture.kernel}  {file}:{self.first_line}"

    def on_mount(self) -> None:
        self.title = "irscope"
        self.sub_title = self.capture.title()
        self.query_one("#stage2", IRView).display = False
        if not self.stages:  # it failed before any stage: the error panel takes the pane
            self.query_one("#stage-tabs").display = self.query_one("#stage-views").display = False
        self._apply_width(self.app.size.width)
        source = self.query_one("#source", IRView)
        source.focus()
        if self.stage is not None:
            self.query_one(StageTabs).active = f"tab-{self.stage}"
            self.show_stage(self.stage)
        if self._start_line is not None:
            source.goto_line(self._start_line - self.first_line)
        self.index_remaining()

    def on_resize(self, event) -> None:
        self._apply_width(event.size.width)

    def _apply_width(self, width: int) -> None:
        self.set_class(width < NARROW_WIDTH, "-narrow")

    # -- loading -----------------------------------------------------------------
    def show_stage(self, stage: str, *, pane: str = "#stage") -> None:
        """Show ``stage`` in a pane: its text now if read, else once a worker read it."""
        view = self.query_one(pane, IRView)
        view.border_title = tab_title(stage)
        if self._holds[pane] == stage:
            return
        if stage in self._texts:
            self._fill(pane, stage)
        else:
            view.set_text(f"(reading {tab_title(stage)}...)")
            self._holds[pane] = None
            view.loading = True
            self.load_stage(stage, pane)

    @work(thread=True, group="stage-load", exit_on_error=False)
    def load_stage(self, stage: str, pane: str) -> None:
        """Read a stage's text, then parse and index it (both off the UI thread)."""
        text = self.capture.stage(stage).text
        if isinstance(text, bytes):
            text = "(binary stage)"
        self.app.call_from_thread(self._text_loaded, stage, pane, text)
        index = self._indexer.get(stage)
        self.app.call_from_thread(self._index_loaded, index)

    @work(thread=True, group="stage-index", exclusive=True, exit_on_error=False)
    def index_remaining(self) -> None:
        """Index every other stage in the background, for the tab counts."""
        for stage in sorted(self.stages, key=lambda s: s == self.stage):  # the shown one last
            if stage not in self.indexes:
                index = self._indexer.get(stage)
                text = self.capture.stage(stage).text  # read (and cached) by the parse
                self.app.call_from_thread(self._prefetched, stage,
                                          text if isinstance(text, str) else "(binary stage)")
                self.app.call_from_thread(self._index_loaded, index)

    def _prefetched(self, stage: str, text: str) -> None:
        # A later tab switch then shows the text at once, with no thread hop.
        self._texts.setdefault(stage, text)

    def _text_loaded(self, stage: str, pane: str, text: str) -> None:
        self._texts[stage] = text
        if self._pane_stage(pane) == stage:
            self._fill(pane, stage)

    def _index_loaded(self, index: StageIndex) -> None:
        new = index.name not in self.indexes
        self.indexes.setdefault(index.name, index)
        # A freshly parsed shown stage scrolls to the line's ops, unless a jump put the
        # cursor somewhere on purpose.
        follow = new and index.name == self.stage and not self._jumping
        self.update_line_marks(follow=("#stage",) if follow else ())

    def _fill(self, pane: str, stage: str) -> None:
        view = self.query_one(pane, IRView)
        view.loading = False
        fresh = self._holds[pane] != stage
        if fresh:
            view.set_text(self._texts[stage], language=highlight_language(stage))
            self._holds[pane] = stage
            self._stage_heat(pane)
        # A split pane that just got its text scrolls to the Python line's ops.
        # A pane that just got its text (a split pane, or a stage tab switch) scrolls to
        # the Python line's ops, unless a jump or a restore puts its cursor on purpose.
        self.update_line_marks(follow=(pane,) if fresh and (pane == "#stage2" or not self._jumping) else ())

    def _pane_stage(self, pane: str) -> str | None:
        if pane == "#stage":
            return self.stage
        return self.split_stage() if self.split else None

    def split_stage(self) -> str | None:
        """The stage of the split pane: the one after the main stage (or before, at the end)."""
        if self.stage is None or len(self.stages) < 2:
            return None
        at = self.stages.index(self.stage)
        return self.stages[at + 1] if at + 1 < len(self.stages) else self.stages[at - 1]

    # -- the Python line and its ops ------------------------------------------------
    @property
    def python_line(self) -> int:
        """The file line under the source pane's cursor."""
        return self.first_line + self.query_one("#source", IRView).cursor_line

    def update_line_marks(self, *, follow: tuple[str, ...] = ()) -> None:
        """Mark the current Python statement's ops in the stage panes and its lines in the
        source pane; retitle the tabs; the panes named in ``follow`` scroll to the
        statement's first op."""
        source = self.query_one("#source", PythonPane)  # the kernel's and its helpers' lines
        rows = source.statement_rows()
        source.set_marks({y: "linked" for y in rows} if len(rows) > 1 else {})
        tabs = self.query_one(StageTabs)
        counts = {s: source.ops(s, self.indexes.get(s)) for s in self.stages}
        tabs.set_counts({s: (None if got is None else len(got)) for s, got in counts.items()})
        for pane, stage in (("#stage", self.stage), ("#stage2", self._pane_stage("#stage2"))):
            if stage is None:
                continue
            view = self.query_one(pane, IRView)
            index = self.indexes.get(stage)
            if index is None or self._holds[pane] != stage:
                continue
            marks = {op.line - 1: "linked" for op in counts.get(stage) or ()}
            if pane == "#stage2":
                marks.update(self._linked_marks)
            view.set_marks(marks)
            if pane in follow and marks and (pane == "#stage" or not self._linked_marks):
                view.goto_line(min(marks))
        self._status()

    def _status(self) -> None:
        pane = self.query_one("#source", PythonPane)
        stage = self.stage
        parts = [f"focus: {self.focused_pane()}", pane.label()]
        if pane.charge_label():  # before the op counts it changes (the line is cut at the right)
            parts.append(pane.charge_label())
        if pane.show_heat:
            parts.append(heat_status(pane.profile, pane.line_heat()))
        if stage is not None:
            index = self.indexes.get(stage)
            if index is None:
                parts.append(f"{tab_title(stage)}: parsing...")
            else:
                ops = pane.ops(stage, index) or []
                parts.append(f"{tab_title(stage)}: {len(ops)} op(s) on "
                             f"{'this statement' if len(pane.statement_rows()) > 1 else 'this line'}")
                op = self.op_under_cursor()
                if op is not None:
                    parts.append(f"cursor on {op.name} (enter: details)")
                view = self.query_one("#stage", IRView)
                if view.heat_shown and view.heat_at(view.cursor_line):
                    parts.append(op_heat_status(view.heat_at(view.cursor_line), pane.profile))
        self.query_one("#stage-status", StatusLine).update_fields(parts)

    @on(IRView.CursorMoved, "#source")
    def _source_moved(self, event: IRView.CursorMoved) -> None:
        follow = ("#stage", "#stage2") if not self._no_follow else ()
        self._no_follow = False
        self.update_line_marks(follow=follow)

    @on(PythonPane.FunctionsLoaded)
    def _functions_loaded(self, event: PythonPane.FunctionsLoaded) -> None:
        helpers = self.query_one("#source", PythonPane).helpers
        if helpers:  # the title says the sections are there, below the kernel's lines
            more = f"(+{len(helpers)} helper{'s' if len(helpers) > 1 else ''} below)"
            title = f"{self.capture.kernel} {more}  {self.capture.file or '?'}:{self.first_line}"
            self.query_one("#source-title", Static).update(Text(title, no_wrap=True, overflow="ellipsis"))
        self.update_line_marks()

    def action_toggle_why(self) -> None:
        """Show or hide the why panel: the cursor line's costs, remarks and hints."""
        self.query_one("#why", WhyPanel).toggle()

    def action_toggle_heat(self) -> None:
        """Switch the heat columns (measured samples) and the static costs."""
        pane = self.query_one("#source", PythonPane)
        if not pane.profiles:
            self.notify(pane.heat_error or "no profile attached to this capture (irscope profile import, or "
                        "irscope run --profile)", timeout=3, markup=False)
            return
        pane.toggle_heat()

    @on(PythonPane.HeatChanged)
    def _heat_changed(self, event: PythonPane.HeatChanged) -> None:
        for pane in ("#stage", "#stage2"):
            self._stage_heat(pane)
        self._status()

    def _stage_heat(self, pane: str) -> None:
        """The heat column of a stage pane, as the Python pane's (on, off, charge mode)."""
        source = self.query_one("#source", PythonPane)
        stage_heat(self.query_one(pane, IRView), self._holds[pane], source.profile if source.show_heat else None)

    def action_toggle_charge(self) -> None:
        """Count a helper's ops on the kernel line that calls it, or on its own lines."""
        pane = self.query_one("#source", PythonPane)
        if not pane.helpers:
            self.notify("this kernel calls no @triton.jit helper" if pane.functions
                        else "still finding the kernel's helpers", timeout=2)
            return
        pane.toggle_charge()
        self.update_line_marks(follow=("#stage",))

    @on(IRView.CursorMoved, "#stage")
    def _stage_moved(self, event: IRView.CursorMoved) -> None:
        if self.split:
            self._update_linked_highlight()
        self._status()

    @on(IRView.LineSelected, "#stage")
    def _stage_selected(self, event: IRView.LineSelected) -> None:
        self.show_details()

    @on(IRView.LineSelected, "#stage2")
    def _stage2_selected(self, event: IRView.LineSelected) -> None:
        # Selecting in the split pane makes its stage the main one, at that op.
        stage = self.split_stage()
        if stage is not None:
            self.jump_to(stage, event.line + 1)

    def op_under_cursor(self) -> "Op | None":
        """The op starting on (or enclosing) the stage pane's cursor line, or None."""
        if self.stage is None or self.stage not in self.indexes:
            return None
        index = self.indexes[self.stage]
        line = self.query_one("#stage", IRView).cursor_line + 1
        op = index.op_at(line)
        if op is not None:
            return op
        for back in range(line - 1, max(0, line - 50), -1):  # inside a multi-line op
            op = index.op_at(back)
            if op is not None:
                return op if op.end_line >= line else None
        return None

    # -- tabs --------------------------------------------------------------------
    @on(Tabs.TabActivated, "#stage-tabs")
    def _tab_activated(self, event: Tabs.TabActivated) -> None:
        stage = StageTabs.stage_of(event.tab.id if event.tab else None)
        if stage is None or stage == self.stage:
            return
        self.stage = stage
        self.show_stage(stage)
        if self.split:
            self._show_split()
        self.query_one(OpDetails).hide()

    def select_stage(self, stage: str) -> None:
        """Make ``stage`` the main pane's stage (as clicking its tab does)."""
        if stage in self.stages:
            self.query_one(StageTabs).active = f"tab-{stage}"
            if stage != self.stage:  # TabActivated arrives later; switch now so callers see it
                self.stage = stage
                self.show_stage(stage)
                if self.split:
                    self._show_split()

    def action_next_stage_tab(self) -> None:
        """Show the next stage."""
        if self.stage is not None:
            at = self.stages.index(self.stage)
            self.select_stage(self.stages[(at + 1) % len(self.stages)])

    def action_previous_stage_tab(self) -> None:
        """Show the previous stage."""
        if self.stage is not None:
            at = self.stages.index(self.stage)
            self.select_stage(self.stages[(at - 1) % len(self.stages)])

    # -- search ------------------------------------------------------------------
    def _focused_view(self) -> IRView:
        focused = self.focused
        if isinstance(focused, IRView):
            return focused
        return self._search_target or self.query_one("#source", IRView)

    def action_search(self) -> None:
        """Search the focused pane."""
        self._search_target = self._focused_view()
        self.query_one(SearchBar).open(self._search_target.search_query,
                                       pane=f"the {self.pane_of(self._search_target)} pane", keep_open=True)

    @on(SearchBar.Submitted)
    def _search_submitted(self, event: SearchBar.Submitted) -> None:
        view = self._search_target or self.query_one("#source", IRView)
        hits = view.search(event.query)
        view.focus()
        event.bar.show_result(f"{hits} line(s) match  n/N: next/previous  escape: close")
        if event.query:
            self.notify(f"{hits} line(s) match" + ("" if hits else f": {event.query}"),
                        timeout=2, markup=False)

    @on(SearchBar.Closed)
    def _search_closed(self, event: SearchBar.Closed) -> None:
        (self._search_target or self.query_one("#source", IRView)).focus()

    def action_next_hit(self) -> None:
        """Go to the next search hit in the focused pane."""
        view = self._focused_view()
        if not view.next_hit():
            self.notify("no search hits (/ to search)", timeout=2)

    def action_previous_hit(self) -> None:
        """Go to the previous search hit in the focused pane."""
        view = self._focused_view()
        if not view.previous_hit():
            self.notify("no search hits (/ to search)", timeout=2)

    def action_error_line(self) -> None:
        """Go to the line a failed compile's error names: the user's line in the Python
        pane (a frontend error), else the PTX line of a ptxas diagnostic."""
        failure = self.capture.failure
        if failure is None:
            self.notify("this capture compiled: no error", timeout=2)
            return
        source = self.query_one("#source", IRView)
        if failure.line is not None and 0 <= failure.line - self.first_line < source.line_count:
            source.goto_line(failure.line - self.first_line)
            source.focus()
        elif failure.ptx_line is not None and PTX in self.stages:
            self.jump_to(PTX, failure.ptx_line)
        else:
            self.notify("the error names no line of the kernel or its stages", severity="warning", timeout=3)

    # -- other screens -------------------------------------------------------------
    def action_passes(self) -> None:
        """Step through the passes of the current stage."""
        stage = self.stage if self.stage in (TTIR, TTGIR, LLIR) else TTGIR
        cast("IrscopeApp", self.app).open_passes(self.capture, stage)

    def action_replay(self) -> None:
        """"Replay with...": a form (options, target, pass to leave out), then the replay
        runs in a worker and the diff with the original opens."""
        from irscope.tui.screens.replay_form import ReplayChoice, ReplayForm, replay_in_worker

        if TTIR not in self.capture.stages:
            self.app.notify(f"{self.capture.title()} has no TTIR to replay from", severity="error", markup=False)
            return

        def chosen(choice: ReplayChoice | None) -> None:
            if choice is not None:
                replay_in_worker(self.app, self.capture, choice)

        self.app.push_screen(ReplayForm(self.capture), chosen)

    def action_back(self) -> None:
        """Back to the browser (or close the search, its hits, the details first)."""
        if self.close_layer():
            return
        panel = self.query_one(OpDetails)
        if panel.shown:
            panel.hide()
            return
        self.app.pop_screen()
