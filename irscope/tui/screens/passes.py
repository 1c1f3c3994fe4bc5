"""The pass stepper: a stage's passes in a timeline, the IR after the current pass
with what it changed marked in place, and what the pass is for.

Left and right step through the passes; ``u`` hides the passes that changed nothing.
The snapshot's text appears at once (it is one read); the diff that marks it runs in
a thread worker and is cached, and the neighbours of the current pass are diffed in
the background right after, so the next step usually finds its marks ready.

Added and changed ops are marked in the IR pane (``+`` and ``~``, moved ops ``>``).
Removed ops have no line in the IR after the pass, so they are listed in the
"removed" pane under it, each with its line in the IR before the pass.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Header, Static
from textual.worker import get_current_worker

from irscope.core import Capture
from irscope.core.pass_steps import PassStep, marks_of
from irscope.irdiff.model import ADDED, CHANGED, MOVED, REMOVED, OpRef, StageDiff
from irscope.tui.widgets.ir_view import IRView
from irscope.tui.widgets.pass_timeline import PassTimeline, change_cell
from irscope.tui.loc_filter import loc_filter
from irscope.tui.widgets.pass_about import PassAbout
from irscope.tui.widgets.search_bar import SearchBar
from irscope.compiler.pass_catalog import describe
from irscope.compiler.stages import highlight_language

# Diff change kind -> IRView mark kind (a moved op is drawn as "linked": it is the same
# op, elsewhere).
MARK_OF = {ADDED: "added", REMOVED: "removed", CHANGED: "changed", MOVED: "linked"}


@dataclass(frozen=True, slots=True)
class StepView:
    """What the IR pane shows for one pass step, computed off the UI thread."""

    text: str
    language: str | None
    marks: dict[int, str]
    """0-based line -> IRView mark kind, in ``text``."""
    removed: tuple[OpRef, ...]
    """Ops the pass removed (their lines are in the *before* text)."""
    diff: StageDiff | None
    """The step's diff (None when one side is unknown or nothing changed)."""
    shows: str
    """Which side ``text`` is: ``after`` or ``before``."""
    note: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    """Changes by kind (added, removed, changed, moved)."""


def step_view(capture: Capture, step: PassStep) -> StepView:
    """The IR after the pass with the changes of its step marked (or, when one side
    is not kept comparably, the side that is, unmarked, with a note saying so)."""
    language = highlight_language(step.kind)
    if step.after is None or step.before is None:
        side = step.before or step.after
        text = capture.side_text(side) if side else ""
        missing = "after" if step.after is None else "before"
        note = f"the IR {missing} this pass is not kept in a comparable form: no changes are marked"
        return StepView(text, language, {}, (), None, "before" if step.after is None else "after", note)
    text = capture.side_text(step.after)
    d = step.diff
    if d is None:
        return StepView(text, language, {}, (), None, "after", "this pass changed nothing",
                        {k: 0 for k in MARK_OF})
    kinds, removed = marks_of(d)
    marks = {line: MARK_OF[kind] for line, kind in kinds.items()}
    counts = {k: d.count(k) for k in MARK_OF}
    note = "" if d.changes else "only text outside the ops changed (attributes, locations, aliases)"
    return StepView(text, language, marks, removed, d, "after", note, counts)


PREFETCH = 2
"""How many passes on each side of the current one are diffed ahead of time."""
PREFETCH_MAX_OPS = 3000
"""Passes with more ops than this (before + after) are not diffed ahead of time: a
diff of that size holds the GIL for seconds (the LLVM lowering: ~20,000 ops, 2-5 s),
which would slow the UI thread while the user steps through cheap passes around
it. They are diffed when shown, in the worker."""


class PassStepperScreen(Screen):
    """Step through the passes of one stage of a capture."""

    DEFAULT_CSS = """
    PassStepperScreen #timeline-pane { width: 52; min-width: 30; max-width: 50%; }
    PassStepperScreen PassTimeline { height: 1fr; }
    PassStepperScreen #pass-title { height: 1; padding: 0 1; background: $boost; text-wrap: nowrap;
                                    text-overflow: ellipsis; }
    PassStepperScreen #pass-about { color: $text-muted; }
    PassStepperScreen #pass-note { height: 1; padding: 0 1; color: $text-warning; text-wrap: nowrap;
                                   text-overflow: ellipsis; }
    PassStepperScreen #snapshot { height: 1fr; }
    PassStepperScreen #removed-title { height: 1; padding: 0 1; background: $boost; }
    PassStepperScreen #removed { height: 25%; max-height: 10; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        # priority: the IR pane and the timeline also bind left/right (scrolling)
        Binding("right", "next_pass", "Next pass", key_display="→", priority=True, id="passes.next"),
        Binding("left", "previous_pass", "Prev pass", key_display="←", priority=True,
                id="passes.previous"),
        Binding("c", "next_change", "Next change", id="passes.next_change"),
        Binding("C", "previous_change", "Previous change", show=False, id="passes.previous_change"),
        Binding("u", "toggle_unchanged", "Skip unchanged", id="passes.skip_unchanged"),
        Binding("s", "next_stage", "Stage", id="passes.next_stage"),
        Binding("d", "diff_pass", "Diff", id="passes.diff"),
        Binding("slash", "search", "Search", key_display="/", id="passes.search"),
        Binding("n", "next_hit", "Next hit", show=False, id="passes.next_hit"),
        Binding("N", "previous_hit", "Previous hit", show=False, id="passes.previous_hit"),
        Binding("escape", "back", "Back", id="passes.back"),
        Binding("l", "toggle_loc", "Hide #loc", show=False, id="passes.toggle_loc"),
    ]

    skip_unchanged: reactive[bool] = reactive(False)
    """Hide the passes that changed nothing (the timeline and left/right skip them)."""
    current: reactive[int] = reactive(-1, init=False)
    """The shown pass: its index in the capture's whole pass list (-1: none)."""

    class StepShown(Message):
        """The IR pane shows pass ``index`` with its marks (sent once the marks are in)."""

        def __init__(self, index: int, name: str, marks: dict[int, str], removed: int) -> None:
            super().__init__()
            self.index = index
            self.name = name
            self.marks = marks
            """0-based line -> mark kind, as set on the IR pane."""
            self.removed = removed
            """How many removed ops are listed."""

    def __init__(self, capture: Capture, stage_name: str, *, index: int | None = None,
                 name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.capture = capture
        self.stage_name = stage_name
        self._start = index
        self._all: list[PassStep] = []
        """The capture's pass steps (read in a worker: the first read of a capture
        computes every pass's op forms, and a stage's counts need its diffs)."""
        self._steps: dict[int, PassStep] = {}
        self._views: dict[int, StepView] = {}
        self._lock = threading.Lock()
        self._shown_text: tuple[int, str] | None = None

    # -- layout ------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="timeline-pane"):
                yield PassTimeline(id="timeline")
            with Vertical(id="snapshot-pane"):
                yield Static(id="pass-title")
                yield PassAbout(id="pass-about")
                yield Static(id="pass-note")
                yield IRView(id="snapshot")
                yield Static(id="removed-title")
                yield IRView(id="removed")
        yield SearchBar(id="search")
        yield Footer()

    def on_mount(self) -> None:
        for hidden in ("#pass-note", "#removed-title", "#removed"):
            self.query_one(hidden).display = False
        self.sub_title = self.capture.title()
        self._apply_loc_filter()
        self.query_one("#pass-title", Static).update(Text("reading the pass timeline…"))
        self._read_passes(self.stage_name, self._start)

    @work(thread=True, exclusive=True, group="pass-timeline", exit_on_error=False)
    def _read_passes(self, stage: str, index: int | None = None) -> None:
        steps = self.capture.pass_steps()
        for s in steps:  # the timeline shows every pass's counts: diff the stage here, off the UI thread
            if s.stage == stage:
                s.counts
        self.app.call_from_thread(self._passes_read, steps, stage, index)

    def _passes_read(self, steps: list[PassStep], stage: str, index: int | None) -> None:
        self._all = steps
        self._load_stage(stage, index)

    # -- data --------------------------------------------------------------------
    @property
    def stages_with_passes(self) -> list[str]:
        """Stages of the capture that have pass snapshots, in pipeline order."""
        return list(dict.fromkeys(p.stage for p in self._all))

    def shown_indexes(self) -> list[int]:
        """Pass indexes the timeline shows now (all of the stage, or the changed ones)."""
        steps = self._steps.values()
        if self.skip_unchanged:
            # a pass whose effect is unknown stays visible: it may have changed something
            return [s.index for s in steps if s.changed or not s.after_known]
        return [s.index for s in steps]

    def _load_stage(self, stage: str, index: int | None = None) -> None:
        self.stage_name = stage
        self._steps = {s.index: s for s in self._all if s.stage == stage}
        self.title = f"passes · {stage}"
        self._fill_timeline()
        shown = self.shown_indexes()
        if not shown:
            self._show_empty()
            return
        target = index if index in shown else shown[0]
        if self.current == target:
            self._show(target)
        else:
            self.current = target

    def _fill_timeline(self) -> None:
        timeline = self.query_one(PassTimeline)
        shown = set(self.shown_indexes())
        timeline.set_passes([s for s in self._steps.values() if s.index in shown])
        if self.current in shown:
            timeline.show_pass(self.current)

    def _show_empty(self) -> None:
        have = ", ".join(self.stages_with_passes) or "none"
        failure = self.capture.failure
        why = (f"\nThe compile failed in {failure.failed_in} before any pass ran: {failure.error}"
               if failure is not None and not self.stages_with_passes else "")
        self.query_one("#pass-title", Static).update(Text(f"{self.stage_name}: no pass snapshots"))
        self.query_one("#pass-about", PassAbout).show(
            Text(f"stages with pass snapshots: {have} (s: next stage){why}"))
        self.query_one("#snapshot", IRView).set_text("")
        self._set_removed(())

    def view_of(self, index: int) -> StepView:
        """The step view of pass ``index`` (computed once; safe from any thread)."""
        with self._lock:
            view = self._views.get(index)
        if view is None:
            view = step_view(self.capture, self._steps[index])
            with self._lock:
                self._views.setdefault(index, view)
        return view

    def cached(self, index: int) -> StepView | None:
        with self._lock:
            return self._views.get(index)

    # -- stepping ----------------------------------------------------------------
    def watch_current(self, index: int) -> None:
        if index >= 0:
            self._show(index)

    def _show(self, index: int) -> None:
        step = self._steps.get(index)
        if step is None:
            return
        self.query_one(PassTimeline).show_pass(index)
        self._show_header(step)
        view = self.cached(index)
        if view is not None:
            self._apply(index, view)
            self._prefetch(index)
            return
        # The text now (one read), the marks when the worker has diffed the pass.
        side = step.after or step.before
        if side is not None:
            self._set_text(index, self.capture.side_text(side), step)
        self._note("diffing…")
        self._compute(index)

    def _show_header(self, step: PassStep) -> None:
        p = step
        shown = self.shown_indexes()
        pos = shown.index(p.index) + 1 if p.index in shown else 0
        # counts first: on a narrow terminal the line is cut at its end
        title = Text()
        title.append(f"{self.stage_name} {pos}/{len(shown)}  ")
        title.append_text(change_cell(p))
        if p.seconds is not None:
            title.append(f"  {p.seconds * 1000:.1f} ms", style="dim")
        title.append("  ")
        title.append(("↳ " if p.depth else "") + p.name, style="bold")
        if p.parent is not None:
            title.append(f" (inside #{p.parent} {self._steps[p.parent].name if p.parent in self._steps else ''})",
                         style="dim")
        if p.argument:
            title.append(f" ({p.argument})", style="dim")
        # fixed-height lines: no relayout, so a step repaints what changed, not the screen
        self.query_one("#pass-title", Static).update(title, layout=False)
        info = describe(p.name, p.argument, family=p.kind)
        about = Text()
        if info is None:
            about.append("(no description in the pass catalog)", style="italic")
        else:
            about.append(info.summary)
            about.append(f"  [{info.source}]", style="dim")
        self.query_one("#pass-about", PassAbout).show(about)  # whole: it grows or scrolls

    def _note(self, text: str) -> None:
        note = self.query_one("#pass-note", Static)
        note.update(Text(text), layout=False)
        if note.display != bool(text):
            note.display = bool(text)

    def _set_text(self, index: int, text: str, step: PassStep) -> None:
        if self._shown_text == (index, "text"):
            return
        pane = self.query_one("#snapshot", IRView)
        keep = pane.cursor_line
        pane.set_text(text, language=highlight_language(step.kind))
        pane.goto_line(min(keep, max(0, pane.line_count - 1)), center=False)
        self._shown_text = (index, "text")

    def _apply(self, index: int, view: StepView) -> None:
        """Put a computed view on screen, if it is still the current pass."""
        if index != self.current:
            return
        self._set_text(index, view.text, self._steps[index])
        pane = self.query_one("#snapshot", IRView)
        pane.set_marks(view.marks)
        extra = f"  (showing the IR {view.shows} the pass)" if view.shows != "after" else ""
        self._note(view.note + extra)
        self._set_removed(view.removed, view.language)
        self.post_message(self.StepShown(index, self._steps[index].name, dict(view.marks),
                                         len(view.removed)))

    def _set_removed(self, removed, language: str | None = None) -> None:
        title = self.query_one("#removed-title", Static)
        pane = self.query_one("#removed", IRView)
        # display, not a CSS class: a class change restyles the IR panes (tens of ms)
        if title.display != bool(removed):
            title.display = pane.display = bool(removed)
        if not removed and pane.line_count == 0:
            return
        title.update(Text(f"removed by this pass: {len(removed)} op(s) (line in the IR before it)"),
                     layout=False)
        width = len(str(max((r.line for r in removed), default=0)))
        pane.set_text("\n".join(f"{r.line:>{width}}  {r.text}" for r in removed), language=language)
        pane.set_marks({i: "removed" for i in range(len(removed))})

    @work(thread=True, exclusive=True, group="pass-diff", exit_on_error=False)
    def _compute(self, index: int) -> None:
        view = self.view_of(index)
        if get_current_worker().is_cancelled:
            return
        self.app.call_from_thread(self._apply, index, view)
        self._prefetch_in_worker(index)

    def _prefetch(self, index: int) -> None:
        self._prefetch_worker(index)

    @work(thread=True, exclusive=True, group="pass-prefetch", exit_on_error=False)
    def _prefetch_worker(self, index: int) -> None:
        self._prefetch_in_worker(index)

    def _prefetch_in_worker(self, index: int) -> None:
        shown = self.shown_indexes()
        if index not in shown:
            return
        at = shown.index(index)
        order = []
        for k in range(1, PREFETCH + 1):
            order += [at + k, at - k]
        for pos in order:
            if get_current_worker().is_cancelled:
                return
            if 0 <= pos < len(shown):
                c = self._steps[shown[pos]]
                if c.ops_before + c.ops_after <= PREFETCH_MAX_OPS:
                    self.view_of(shown[pos])

    def _step(self, delta: int) -> None:
        shown = self.shown_indexes()
        if not shown:
            return
        if self.current in shown:
            pos = max(0, min(len(shown) - 1, shown.index(self.current) + delta))
        else:
            later = [i for i in shown if i > self.current]
            pos = shown.index(later[0]) if later else len(shown) - 1
        self.current = shown[pos]

    # -- actions -----------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # left/right are priority bindings: leave them to the search input while it is open
        if action in ("next_pass", "previous_pass") and isinstance(self.focused, SearchBar):
            return False
        return True

    def action_next_pass(self) -> None:
        """Show the next pass of the timeline."""
        self._step(1)

    def action_previous_pass(self) -> None:
        """Show the previous pass of the timeline."""
        self._step(-1)

    def action_next_change(self) -> None:
        """Move the IR pane's cursor to the next marked line."""
        self._goto_mark(1)

    def action_previous_change(self) -> None:
        """Move the IR pane's cursor to the previous marked line."""
        self._goto_mark(-1)

    def _goto_mark(self, direction: int) -> None:
        pane = self.query_one("#snapshot", IRView)
        lines = sorted(pane.marks)
        if not lines:
            return
        here = pane.cursor_line
        after = [y for y in lines if y > here] if direction > 0 else [y for y in lines if y < here][::-1]
        pane.goto_line(after[0] if after else (lines[0] if direction > 0 else lines[-1]))

    def action_toggle_unchanged(self) -> None:
        """Show or hide the passes that changed nothing."""
        self.skip_unchanged = not self.skip_unchanged

    def watch_skip_unchanged(self, skip: bool) -> None:
        if not self.is_mounted:
            return
        self._fill_timeline()
        shown = self.shown_indexes()
        if not shown:
            self._show_empty()
            return
        if self.current not in shown:
            later = [i for i in shown if i > self.current]
            self.current = later[0] if later else shown[-1]
        else:
            self._show_header(self._steps[self.current])
        self.notify("passes that change nothing: " + ("hidden" if skip else "shown"), timeout=2)

    def action_next_stage(self) -> None:
        """Step through the next stage that has pass snapshots."""
        stages = self.stages_with_passes
        if not stages:
            return
        nxt = stages[(stages.index(self.stage_name) + 1) % len(stages)] if self.stage_name in stages \
            else stages[0]
        self._shown_text = None
        self.query_one("#pass-title", Static).update(Text(f"reading the {nxt} passes…"))
        self._read_passes(nxt)

    def action_diff_pass(self) -> None:
        """Open the diff screen on the IR before and after the current pass."""
        step = self._steps.get(self.current)
        if step is None or step.before is None or step.after is None:
            self.notify("this pass has no comparable IR on both sides", severity="warning")
            return
        self._diff_worker(step)

    @work(thread=True, exclusive=True, group="pass-diff-screen", exit_on_error=False)
    def _diff_worker(self, step: PassStep) -> None:
        from irscope.diff.compare import Comparison
        from irscope.tui.screens.diff import DiffScreen

        view = self.view_of(step.index)
        if step.before is None or step.after is None:  # action_diff_pass sends only steps with both
            return
        if view.diff is None:
            self.app.call_from_thread(self.notify, "this pass changed nothing", timeout=2)
            return
        before = self.capture.side_text(step.before)
        after = self.capture.side_text(step.after)
        # Named by the pass's stage (ttgir), not by the format its snapshots are read as (mlir).
        stage = step.stage
        comparison = Comparison(f"before {step.name} ({step.before.label})",
                                f"after ({step.after.label})", {stage: view.diff})
        self.app.call_from_thread(self.app.push_screen,
                                  DiffScreen(comparison, texts={stage: (before, after)}))

    def action_search(self) -> None:
        """Search the IR pane."""
        self.query_one(SearchBar).open(self.query_one("#snapshot", IRView).search_query,
                                       pane=f"the {self.stage_name} snapshot")

    @on(SearchBar.Submitted)
    def _search(self, event: SearchBar.Submitted) -> None:
        pane = self.query_one("#snapshot", IRView)
        hits = pane.search(event.query)
        pane.focus()
        if event.query:
            self.notify(f"{hits} line(s) match", timeout=2, markup=False)

    @on(SearchBar.Closed)
    def _search_closed(self) -> None:
        self.query_one("#snapshot", IRView).focus()

    def action_next_hit(self) -> None:
        self.query_one("#snapshot", IRView).next_hit()

    def action_previous_hit(self) -> None:
        self.query_one("#snapshot", IRView).previous_hit()

    def _apply_loc_filter(self) -> None:
        # The kernel view's setting (the app's hide_loc): the snapshots read the same.
        hide = bool(getattr(self.app, "hide_loc", True))
        for pane in ("#snapshot", "#removed"):
            self.query_one(pane, IRView).set_filter(*loc_filter(hide))

    def action_toggle_loc(self) -> None:
        """Hide or show the #loc lines and loc(...) suffixes of the snapshot."""
        setattr(self.app, "hide_loc", not getattr(self.app, "hide_loc", True))
        self._apply_loc_filter()

    def action_back(self) -> None:
        """Back to the screen this one was opened from."""
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    @on(PassTimeline.PassChosen)
    def _chosen(self, event: PassTimeline.PassChosen) -> None:
        self.current = event.index
