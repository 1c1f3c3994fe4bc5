""""Replay with..." (``R`` in the kernel view): a small form, then the diff.

The form takes compile options (``num_stages=2 num_warps=4``), a target and a pass of
the TTGIR pipeline to leave out. The replay itself runs as ``python -m irscope replay``
in a subprocess from a thread worker (the app never imports the capture or what-if
code), and once it is captured the diff of the original and the replay opens.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from irscope.compiler.stages import TTGIR, TTIR
from irscope.core.passes import droppable_passes
from irscope.errors import IrscopeError

if TYPE_CHECKING:
    from textual.app import App

    from irscope.core import Capture
    from irscope.tui.app import IrscopeApp

REPLAY_TIMEOUT_S = 600
"""How long a replay may take before the app gives up on it."""


@dataclass(frozen=True, slots=True)
class ReplayChoice:
    """What the form asks for."""

    sets: tuple[str, ...] = ()
    """``KEY=VALUE`` items, as ``irscope replay --set`` takes them."""
    target: str | None = None
    without: str | None = None
    """A pass to leave out, by its MLIR argument."""


def parse_choice(sets_text: str, target_text: str, without: str | None) -> ReplayChoice:
    """The form's fields as a choice; IrscopeError (one line) for an option that is not
    ``KEY=VALUE``."""
    sets = tuple(sets_text.replace(",", " ").split())
    bad = [s for s in sets if "=" not in s.strip("=")]
    if bad:
        raise IrscopeError(f"{bad[0]!r}: options are KEY=VALUE, e.g. num_stages=2")
    return ReplayChoice(sets, target_text.strip() or None, without or None)


def replay_command(capture: "Capture", choice: ReplayChoice, python: str = sys.executable) -> list[str]:
    """The ``irscope replay`` command line the app runs for ``choice`` (JSON out, no progress)."""
    cmd = [python, "-m", "irscope", "replay", str(capture.bundle.path), f"#{capture.id}", "--from", TTIR,
           "--json", "-q"]
    for item in choice.sets:
        cmd += ["--set", item]
    if choice.target:
        cmd += ["--target", choice.target]
    if choice.without:
        cmd += ["--without-pass", choice.without]
    return cmd


class ReplayForm(ModalScreen["ReplayChoice | None"]):
    """Options, target and a pass to leave out; enter or Replay runs it, escape cancels."""

    DEFAULT_CSS = """
    ReplayForm { align: center middle; }
    #replay-box { width: 72; height: auto; border: round $accent; padding: 1 2; background: $surface; }
    #replay-box Label { margin-top: 1; }
    #replay-problem { color: $error; height: auto; }
    #replay-buttons { height: auto; margin-top: 1; }
    #replay-buttons Button { margin-right: 2; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="replay_form.cancel"),
    ]

    def __init__(self, capture: "Capture") -> None:
        super().__init__()
        self.capture = capture
        self.passes = droppable_passes(capture.passes(TTGIR))
        """The passes the form offers to leave out (the captured TTGIR pipeline's)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="replay-box"):
            yield Static(Text(f"Replay {self.capture.title()} from its TTIR", style="bold"), id="replay-title")
            yield Label(Text("Options (KEY=VALUE, space-separated)"))
            yield Input(placeholder="num_stages=2 num_warps=4", id="replay-sets")
            yield Label(Text("Target"))
            yield Input(placeholder=f"{self.capture.target} (as captured)", id="replay-target")
            yield Label(Text("Pass to leave out"))
            yield Select([(p, p) for p in self.passes], prompt="(none)", allow_blank=True, id="replay-pass")
            yield Static("", id="replay-problem")
            with Horizontal(id="replay-buttons"):
                yield Button("Replay", variant="primary", id="replay-run")
                yield Button("Cancel", id="replay-cancel")

    def on_mount(self) -> None:
        self.query_one("#replay-sets", Input).focus()

    def choice(self) -> ReplayChoice:
        """The fields as they stand (IrscopeError for a malformed option)."""
        picked = self.query_one("#replay-pass", Select).value
        return parse_choice(self.query_one("#replay-sets", Input).value,
                            self.query_one("#replay-target", Input).value,
                            picked if isinstance(picked, str) else None)

    @on(Button.Pressed, "#replay-run")
    @on(Input.Submitted)
    def _submit(self) -> None:
        try:
            choice = self.choice()
        except IrscopeError as exc:
            self.query_one("#replay-problem", Static).update(Text(str(exc)))
            return
        self.dismiss(choice)

    @on(Button.Pressed, "#replay-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


def replay_in_worker(app: "App", capture: "Capture", choice: ReplayChoice) -> None:
    """Run the replay in a thread worker, then open the diff of ``capture`` and the replay.
    Every failure is a one-line notification (the command's own error line)."""

    def job() -> None:
        from irscope.core import open_bundle
        from irscope.diff.compare import compare_captures

        try:
            done = subprocess.run(replay_command(capture, choice), capture_output=True, text=True,
                                  timeout=REPLAY_TIMEOUT_S, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            app.call_from_thread(app.notify, f"the replay took over {REPLAY_TIMEOUT_S} s: stopped",
                                 severity="error", markup=False)
            return
        lines = [ln for ln in done.stderr.splitlines() if ln.startswith("irscope: error:")]
        try:
            data = json.loads(done.stdout) if done.stdout.strip() else None
        except ValueError:
            data = None
        if lines:
            app.call_from_thread(app.notify, lines[-1], severity="error", markup=False, timeout=10)
        if not data or data.get("replay_id") is None:
            if not lines:
                app.call_from_thread(app.notify, f"the replay ended with code {done.returncode}",
                                     severity="error", markup=False)
            return
        try:
            replays = open_bundle(data["output"])
            replay = replays.capture(f"#{data['replay_id']}")
            comparison = compare_captures(capture, replay, a_label=capture.title(), b_label=replay.title())
        except IrscopeError as exc:
            app.call_from_thread(app.notify, str(exc), severity="error", markup=False)
            return
        app.call_from_thread(lambda: cast("IrscopeApp", app).open_diff(comparison, a=capture, b=replay))

    app.notify(f"replaying {capture.title()}...", markup=False, timeout=3)
    app.run_worker(job, thread=True, group="replay", exclusive=True, name="replay", exit_on_error=False)
