"""Following an op across stages in the kernel view: its details (enter, ``i``: types,
layout, location chain, the pass that made it, what it became), jumps to the op it is
linked to in the next or previous stage (``]``, ``[``, with the Python pane following),
and the split view (``v``: a second stage beside the first, its linked ops marked).

:class:`KernelLinks` sits between :class:`irscope.tui.kernel_nav.KernelNavigation` and
:class:`irscope.tui.screens.kernel.KernelScreen`, its one subclass: it reads that
screen's state (stages, their indexes, the split) through ``_kernel()``. Links and
details are built in thread workers, off the UI thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work

from irscope.tui.kernel_nav import KernelNavigation
from irscope.tui.widgets.ir_view import IRView
from irscope.tui.widgets.op_details import OpDetails, op_detail, render_detail
from irscope.tui.widgets.python_pane import PythonPane

if TYPE_CHECKING:
    from irscope.ir import Op


class KernelLinks(KernelNavigation):
    """Op details, jumps between stages, and the split view of the kernel screen."""

    # -- details and jumps -----------------------------------------------------------
    def show_details(self) -> None:
        """Gather the details of the op under the stage cursor (in a worker) and show them."""
        screen = self._kernel()
        op = screen.op_under_cursor()
        if op is None or screen.stage is None:
            screen.notify("no op starts on this line", severity="warning", timeout=2)
            return
        panel = screen.query_one(OpDetails)
        panel.show_text(Text(f"{op.name}: reading links and pass origins...", style="dim"))
        screen.gather_details(screen.stage, op)

    @work(thread=True, group="details", exclusive=True, exit_on_error=False)
    def gather_details(self, stage: str, op: "Op") -> None:
        """Build the op's details off the UI thread (links and origins are computed once)."""
        screen = self._kernel()
        module = screen.indexes[stage].module
        if module is None:  # an unparsed stage has no ops to pick
            return
        width = max(8, (screen.app.size.width - 12) // 3)
        detail = op_detail(screen.capture, stage, op, module, screen.stages, grid_cols=min(16, width))
        screen.app.call_from_thread(screen._details_ready, detail)

    def _details_ready(self, detail) -> None:
        screen = self._kernel()
        screen._detail = detail
        screen.query_one(OpDetails).show_text(render_detail(detail))

    def action_toggle_details(self) -> None:
        """Show or hide the op details."""
        screen = self._kernel()
        panel = screen.query_one(OpDetails)
        if panel.shown:
            panel.hide()
        else:
            screen.show_details()

    def action_jump_next(self) -> None:
        """Jump to what the selected op became in the next stage."""
        self._jump(+1)

    def action_jump_previous(self) -> None:
        """Jump to what the selected op came from in the previous stage."""
        self._jump(-1)

    def _jump(self, direction: int) -> None:
        screen = self._kernel()
        d = screen._detail
        if d is None or d.stage != screen.stage:
            screen.notify("select an op first (enter on a stage line)", severity="warning", timeout=2)
            return
        target = d.next_stage if direction > 0 else d.previous_stage
        ops = d.links.get(target, []) if target else []
        if not ops:
            screen.notify(f"nothing linked in the {'next' if direction > 0 else 'previous'} stage",
                          severity="warning", timeout=2)
            return
        screen.jump_to(target, ops[0].line)

    def jump_to(self, stage: str, text_line: int) -> None:
        """Show ``stage`` at 1-based ``text_line`` and move the Python pane to its line."""
        screen = self._kernel()
        screen._jumping = True
        screen.select_stage(stage)
        view = screen.query_one("#stage", IRView)

        def go() -> None:
            screen._jumping = False
            view.goto_line(text_line - 1)
            view.focus()
            index = screen.indexes.get(stage)
            op = index.op_at(text_line) if index is not None else None
            if op is not None:
                source = screen.query_one("#source", PythonPane)
                row = source.row_of_op(stage, op)  # the first line of the op's statement
                if row is not None:
                    if source.cursor_line != row:
                        screen._no_follow = True  # the stage pane stays on the jump target
                    source.goto_line(row)
                screen.show_details()

        if stage in screen._texts and stage in screen.indexes:
            go()
        else:
            screen._after_load(stage, go)

    @work(thread=True, group="jump", exclusive=True, exit_on_error=False)
    def _after_load(self, stage: str, then) -> None:
        # The stage is read and indexed by its own worker; the core caches the parse, so
        # indexing here again costs a lookup, and the callback runs once both are in.
        screen = self._kernel()
        text = screen.capture.stage(stage).text
        index = screen._indexer.get(stage)

        def done() -> None:
            screen._texts.setdefault(stage, text if isinstance(text, str) else "(binary stage)")
            screen.indexes.setdefault(stage, index)
            if screen.stage == stage:
                screen._fill("#stage", stage)
            then()

        screen.app.call_from_thread(done)

    # -- split view ----------------------------------------------------------------
    def action_toggle_split(self) -> None:
        """Show two stages side by side (the main one and the next)."""
        screen = self._kernel()
        screen.split = not screen.split
        view = screen.query_one("#stage2", IRView)
        view.display = screen.split
        screen.set_class(screen.split, "-split")
        if screen.split:
            screen._show_split()
        else:
            screen._linked_marks = {}

    def _show_split(self) -> None:
        screen = self._kernel()
        stage = screen.split_stage()
        if stage is not None:
            screen.show_stage(stage, pane="#stage2")
            screen._update_linked_highlight()

    def _update_linked_highlight(self) -> None:
        screen = self._kernel()
        op = screen.op_under_cursor()
        other = screen.split_stage()
        if op is None or other is None or screen.stage is None:
            screen._linked_marks = {}
            screen.update_line_marks()
            return
        screen.linked_ops(screen.stage, op.line, other)

    @work(thread=True, group="linked", exclusive=True, exit_on_error=False)
    def linked_ops(self, stage: str, line: int, other: str) -> None:
        """What the op under the cursor is linked to in the split pane's stage."""
        from irscope.errors import IrscopeError

        screen = self._kernel()
        try:
            got = screen.capture.links_for_op(stage, line).links.get(other, [])
        except IrscopeError:
            got = []
        screen.app.call_from_thread(screen._linked_ready, other, [o.line for o in got])

    def _linked_ready(self, other: str, lines: list[int]) -> None:
        screen = self._kernel()
        if other != screen.split_stage():
            return
        screen._linked_marks = {ln - 1: "hit" for ln in lines}
        screen.update_line_marks()
        if lines:
            screen.query_one("#stage2", IRView).goto_line(lines[0] - 1)
