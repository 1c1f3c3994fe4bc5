"""Navigation of the kernel view: which pane has the focus, escape one layer at a time,
the "hide ``#loc``" toggle, the width of the IR pane, and the view a kernel is reopened at.

:class:`KernelNavigation` is a base of :class:`irscope.tui.screens.kernel.KernelScreen`,
through :class:`irscope.tui.kernel_links.KernelLinks` (it reads that screen's panes by id:
``#source``, ``#stage``, ``#stage2``, ``#search``).
The app keeps the user's choices (``hide_loc``, ``ir_share``) and each capture's last
view (:class:`KernelViewState`, by capture id), so they outlive the screen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import Widget

from irscope.tui.loc_filter import loc_filter
from irscope.tui.widgets.ir_view import IRView
from irscope.tui.widgets.search_bar import SearchBar
from irscope.tui.widgets.stage_tabs import tab_title

if TYPE_CHECKING:
    from irscope.tui.screens.kernel import KernelScreen

IR_SHARE_DEFAULT = 6
"""The IR pane's share of the kernel view, in tenths (the Python pane has the rest)."""
IR_SHARE_MIN, IR_SHARE_MAX = 2, 9

STAGE_PANES = ("#stage", "#stage2")


@dataclass(frozen=True, slots=True)
class KernelViewState:
    """Where a kernel view was when it was left: the main stage, the split, and each
    pane's cursor line and scroll (0-based content lines, rows)."""

    stage: str | None
    split: bool
    source_line: int
    source_scroll: int
    stage_line: int
    stage_scroll: int


def view_states(app: object) -> dict[int, KernelViewState]:
    """The app's capture id -> last kernel view (made on first use)."""
    states = getattr(app, "kernel_views", None)
    if states is None:
        states = {}
        setattr(app, "kernel_views", states)
    return states


def restore_view(screen: "KernelScreen", state: KernelViewState | None) -> None:
    """Before ``screen`` is pushed: show ``state``'s stage first, and put its panes back
    where they were once mounted (:meth:`KernelNavigation.on_mount`)."""
    if state is None:
        return
    if state.stage in screen.stages:
        screen.stage = state.stage
    screen._restore_state = state


class KernelNavigation(Screen):
    """Focus naming, layered escape, ``#loc`` hiding, pane widths and view restore."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("l", "toggle_loc", "Hide #loc", show=False, id="kernel.toggle_loc"),
        Binding("plus", "widen_ir", "Widen IR pane", key_display="+", show=False,
                id="kernel.widen_ir"),
        Binding("minus", "narrow_ir", "Narrow IR pane", key_display="-", show=False,
                id="kernel.narrow_ir"),
    ]

    _restore_state: KernelViewState | None = None

    # -- the focused pane ----------------------------------------------------------
    def focused_pane(self) -> str:
        """The name of the focused pane, as the status line shows it."""
        widget: Widget | None = self.focused
        while widget is not None and widget is not self:
            name = self._pane_name(widget)
            if name:
                return name
            parent = widget.parent
            widget = parent if isinstance(parent, Widget) else None
        return "none"

    def _pane_name(self, widget: Widget) -> str:
        ident = widget.id or ""
        if ident == "source":
            return "Python"
        if ident == "stage":
            stage = self._kernel().stage
            return tab_title(stage) if stage else "IR"
        if ident == "stage2":
            stage = self._kernel().split_stage()
            return f"{tab_title(stage) if stage else 'IR'} (split)"
        if ident == "stage-tabs":
            return "stage tabs"
        if ident == "details":
            return "op details"
        if ident == "error-panel":  # a failed capture's error (widgets/error_panel.py)
            return "error panel"
        if ident == "search":
            return "search"
        if ident == "why":  # the cursor line's facts (widgets/why_panel.py)
            return "why panel"
        return ""

    def pane_of(self, view: Widget) -> str:
        """The name of the pane ``view`` is (``Python``, ``TTGIR``...)."""
        return self._pane_name(view) or "this"

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.refresh_status()

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        self.call_after_refresh(self.refresh_status)

    def refresh_status(self) -> None:
        """Repaint the status line (the kernel screen fills it)."""
        status = getattr(self, "_status", None)
        if status is None or not self.is_mounted:
            return
        try:
            status()
        except NoMatches:  # a blur while the screen is being taken down: nothing to paint
            pass

    # -- escape, one layer at a time -------------------------------------------------
    def close_layer(self) -> bool:
        """Close the innermost thing escape closes before leaving the view: the search
        bar (kept as a result line after a search), then the search's hits. True when
        something was closed (the view stays)."""
        bar = self.query_one(SearchBar)
        if bar.shown:
            bar.hide()
            self.notify("search closed (escape again: clear its hits)", timeout=2)
            return True
        for view in self.query(IRView):
            if view.search_query:
                view.search("")
                self.notify("search hits cleared (escape again: back)", timeout=2)
                return True
        return False

    # -- hide #loc -------------------------------------------------------------------
    @property
    def hide_loc(self) -> bool:
        """Whether the stage panes hide ``#loc`` lines and ``loc(...)`` suffixes (the
        app's setting, on by default)."""
        return bool(getattr(self.app, "hide_loc", True))

    def apply_loc_filter(self) -> None:
        """Set (or clear) the ``#loc`` filter of the stage panes."""
        for pane in STAGE_PANES:
            self.query_one(pane, IRView).set_filter(*loc_filter(self.hide_loc))

    def action_toggle_loc(self) -> None:
        """Hide or show the #loc lines and loc(...) suffixes of the stage panes."""
        setattr(self.app, "hide_loc", not self.hide_loc)
        self.apply_loc_filter()
        self.notify("#loc lines hidden (l: show)" if self.hide_loc else "#loc lines shown (l: hide)",
                    timeout=2)
        self.refresh_status()

    # -- the IR pane's width ------------------------------------------------------------
    @property
    def ir_share(self) -> int:
        """The IR pane's share of the view, in tenths (the app's setting)."""
        return int(getattr(self.app, "ir_share", IR_SHARE_DEFAULT))

    def apply_ir_share(self) -> None:
        """Size the two panes by :attr:`ir_share`: widths side by side, heights stacked."""
        share = self.ir_share
        source, stage = self.query_one("#source-pane"), self.query_one("#stage-pane")
        if self.has_class("-narrow"):
            source.styles.width = stage.styles.width = None
            source.styles.height = f"{10 - share}fr"
            stage.styles.height = f"{share}fr"
        else:
            source.styles.height = stage.styles.height = None
            source.styles.width = f"{10 - share}fr"
            stage.styles.width = f"{share}fr"

    def _set_share(self, share: int) -> None:
        share = max(IR_SHARE_MIN, min(IR_SHARE_MAX, share))
        if share == self.ir_share:
            self.notify(f"the IR pane is at its {'widest' if share == IR_SHARE_MAX else 'narrowest'}",
                        timeout=2)
            return
        setattr(self.app, "ir_share", share)
        self.apply_ir_share()

    def action_widen_ir(self) -> None:
        """Widen the IR pane (the Python pane narrows)."""
        self._set_share(self.ir_share + 1)

    def action_narrow_ir(self) -> None:
        """Narrow the IR pane (the Python pane widens)."""
        self._set_share(self.ir_share - 1)

    # -- mount, resize, leave --------------------------------------------------------------
    def on_mount(self) -> None:
        self.apply_loc_filter()
        self.apply_ir_share()
        state = self._restore_state
        if state is not None:
            self._restore_state = None
            self._restore(state)

    def on_resize(self, event: events.Resize) -> None:
        # After the kernel screen's own handler has set (or cleared) -narrow.
        self.apply_ir_share()

    def on_screen_suspend(self, event: events.ScreenSuspend) -> None:
        self.save_view()

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        # The pass stepper (over this screen) may have changed the app's #loc setting.
        self.apply_loc_filter()

    def save_view(self) -> None:
        """Keep where this view is, for when its capture is opened again."""
        screen = self._kernel()
        if not screen.is_mounted:
            return
        source = screen.query_one("#source", IRView)
        stage = screen.query_one("#stage", IRView)
        view_states(self.app)[screen.capture.id] = KernelViewState(
            screen.stage, screen.split, source.cursor_line, round(source.scroll_offset.y),
            stage.cursor_line, round(stage.scroll_offset.y))

    def _kernel(self) -> "KernelScreen":
        from irscope.tui.screens.kernel import KernelScreen

        assert isinstance(self, KernelScreen)  # the one subclass
        return self

    def _restore(self, state: KernelViewState) -> None:
        screen = self._kernel()
        source = screen.query_one("#source", IRView)
        if state.split and not screen.split:
            screen.action_toggle_split()
        if source.cursor_line != state.source_line:
            screen._no_follow = True  # the stage pane goes back to its own line below
            source.goto_line(state.source_line, center=False)
        source.call_after_refresh(source.scroll_to, y=state.source_scroll, animate=False,
                                  immediate=True)
        stage = state.stage
        if stage is None or stage not in screen.stages:
            return
        screen._jumping = True  # no scroll to the line's ops when the index comes in

        def put_back() -> None:
            screen._jumping = False
            view = screen.query_one("#stage", IRView)
            view.goto_line(state.stage_line, center=False)
            view.call_after_refresh(view.scroll_to, y=state.stage_scroll, animate=False,
                                    immediate=True)
            screen.update_line_marks()

        if stage in screen._texts and stage in screen.indexes:
            put_back()
        else:
            screen._after_load(stage, put_back)
