"""The stage tabs of the kernel view: TTIR, TTGIR, LLIR, PTX, SASS (AMDGCN on AMD), each
titled with how many ops the Python line under the cursor has in that stage."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import Static, Tab, Tabs

from irscope.compiler.stages import AMDGCN, STAGES


def tab_title(stage: str) -> str:
    """``ttgir`` -> ``TTGIR``."""
    return stage.upper()


def tab_label(stage: str, count: int | None) -> Text:
    """The tab's label: its title and, when known, the op count of the current line."""
    label = Text(tab_title(stage))
    if count is not None:
        label.append(f" {count}", style="bold" if count else "dim")
    return label


class StageTabs(Tabs):
    """Tabs with one tab per stage (id ``tab-<stage>``) and remappable keys."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "previous_tab", "Previous stage", show=False, id="stage_tabs.previous"),
        Binding("right", "next_tab", "Next stage", show=False, id="stage_tabs.next"),
    ]

    def __init__(self, stages: list[str], *, id: str | None = None) -> None:
        super().__init__(*(Tab(tab_label(s, None), id=f"tab-{s}") for s in stages), id=id)
        self.stages = list(stages)
        self._counts: dict[str, int | None] = {s: None for s in stages}

    @staticmethod
    def stage_of(tab_id: str | None) -> str | None:
        """``tab-ttgir`` -> ``ttgir``."""
        return tab_id[4:] if tab_id and tab_id.startswith("tab-") else None

    def set_counts(self, counts: dict[str, int | None]) -> None:
        """Retitle the tabs whose count changed."""
        for stage in self.stages:
            count = counts.get(stage)
            if self._counts.get(stage, -1) != count:
                self._counts[stage] = count
                tab = self.query_one(f"#tab-{stage}", Tab)
                label = Content.from_text(tab_label(stage, count))
                if label.cell_length == tab.label.cell_length:
                    # Same width: repaint the tab only. Setting ``label`` relayouts the
                    # tab bar and re-slides its underline, most of a line move's cost.
                    Static.update(tab, label, layout=False)
                    tab._label = label  # Tab.label in step (Tab has no public way)
                else:
                    tab.label = label

    def count(self, stage: str) -> int | None:
        """The count shown on ``stage``'s tab (None: not known yet)."""
        return self._counts.get(stage)


def view_stages(stages: tuple[str, ...]) -> list[str]:
    """The stages a kernel view shows as tabs: the lowering stages and AMDGCN, in order."""
    return [s for s in stages if s in STAGES and (STAGES[s].lowering or s == AMDGCN)]
