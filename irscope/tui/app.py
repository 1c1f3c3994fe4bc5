"""The ``irscope open`` app: a kernel browser, kernel views, pass stepper and diffs.

:func:`make_app` is the one factory: the CLI, the tests, the snapshots and the
benchmarks all build the app through it, so what they check is what users run.
Screens are pushed through :meth:`IrscopeApp.open_capture`, :meth:`open_passes` and
:meth:`open_diff`; the pass stepper and the diff screen live in their own modules and
are imported only when first opened.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from irscope.core import open_bundle
from irscope.errors import IrscopeError
from irscope.tui.commands import IrscopeCommands

if TYPE_CHECKING:
    from irscope.core import Bundle, Capture
    from irscope.tui.kernel_nav import KernelViewState

DARK_THEME = "textual-dark"
LIGHT_THEME = "textual-light"

KEYMAP_ENV = "IRSCOPE_KEYMAP"
"""Environment variable naming a keymap TOML file (else ``~/.config/irscope/keymap.toml``)."""


def default_keymap_path() -> Path:
    """Where the keymap file is looked for when ``IRSCOPE_KEYMAP`` is not set."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "irscope" / "keymap.toml"


def load_keymap(path: str | os.PathLike | None = None) -> dict[str, str]:
    """Binding id -> keys (comma-separated) from a TOML file, as ``App.set_keymap`` takes.

    The file holds ``"binding.id" = "keys"`` pairs, at top level or under ``[keymap]``.
    No file (and no ``IRSCOPE_KEYMAP``): an empty keymap. A named file that is missing
    or malformed raises IrscopeError (one line, before the app starts).
    """
    explicit = path is not None or bool(os.environ.get(KEYMAP_ENV))
    target = Path(path if path is not None else os.environ.get(KEYMAP_ENV) or default_keymap_path())
    if not target.is_file():
        if explicit:
            raise IrscopeError(f"keymap file {str(target)!r} not found")
        return {}
    # tomllib is 3.11+ (3.10 gets the error below), imported only when a keymap file exists.
    try:
        import tomllib  # type: ignore[import-not-found, unused-ignore]  # noqa: PLC0415  (3.11+ only)
    except ImportError:
        raise IrscopeError(f"keymap {str(target)!r}: reading keymap files needs Python 3.11 or later") from None
    try:
        data = tomllib.loads(target.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise IrscopeError(f"cannot read keymap {str(target)!r}: {exc}") from None
    table = data.get("keymap", data)
    if not isinstance(table, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in table.items()):
        raise IrscopeError(f"keymap {str(target)!r}: expected \"binding.id\" = \"keys\" pairs")
    return dict(table)


def worker_error_line(worker: Worker) -> str:
    """What a failed worker's notification says: one line, the worker and its error
    (an IrscopeError's message as it is, any other error with its type)."""
    error = worker.error
    what = (worker.name or "a background task").strip("_").replace("_", " ")
    detail = " ".join(str(error).split()) if error is not None else ""
    if error is not None and not isinstance(error, IrscopeError):
        detail = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
    line = f"{what} failed: {detail or 'unknown error'}"
    return line if len(line) <= 300 else line[:299] + "\u2026"


class IrscopeApp(App):
    """Browse a bundle's captures, step through their lowering, diff them."""

    CSS_PATH = "app.tcss"
    TITLE = "irscope"
    COMMANDS = App.COMMANDS | {IrscopeCommands}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("question_mark", "help", "Help", key_display="?", id="app.help"),
        Binding("ctrl+t", "toggle_theme", "Theme", id="app.toggle_theme"),
        Binding("ctrl+p", "command_palette", "Commands", show=False, id="app.command_palette"),
    ]

    def __init__(self, bundle: "Bundle", *, capture: "Capture | None" = None, diff=None, diff_sides=None,
                 keymap: dict[str, str] | None = None) -> None:
        super().__init__()
        self.bundle = bundle
        """The open bundle every screen reads."""
        self._start_capture = capture
        self._start_diff = diff
        self._start_diff_sides = diff_sides
        self.theme = DARK_THEME
        self.keymap_overrides: dict[str, str] = dict(keymap or {})
        """Binding id -> keys, from the user's keymap file (the help screen shows them)."""
        if keymap:
            self.set_keymap(keymap)
        self.hide_loc = True
        """Whether the kernel view's stage panes hide #loc lines and loc(...) suffixes."""
        self.ir_share = 6
        """The kernel view's IR pane share, in tenths (keys + and - change it; the
        default is kernel_nav.IR_SHARE_DEFAULT)."""
        self.kernel_views: dict[int, KernelViewState] = {}
        """Capture id -> where its kernel view was left (restored when it is reopened)."""

    @property
    def dark(self) -> bool:
        """Whether the current theme is a dark one."""
        return self.current_theme.dark

    def on_mount(self) -> None:
        from irscope.tui.screens.browser import BrowserScreen

        # Worker errors: every worker runs with exit_on_error=False, and its
        # Worker.StateChanged goes to the node that started it, without bubbling. The
        # app hears its own workers' messages (on_worker_state_changed) and, through
        # each screen's message signal, those of every screen's workers.
        self.screen_change_signal.subscribe(self, self._watch_workers, immediate=True)
        self.sub_title = os.path.basename(self.bundle.path)
        self.push_screen(BrowserScreen(self.bundle))
        if self._start_capture is not None:
            self.open_capture(self._start_capture)
        if self._start_diff is not None:
            a, b = self._start_diff_sides or (None, None)
            self.open_diff(self._start_diff, a=a, b=b)

    # -- worker errors (the app edge: a worker's error never closes the app) ------
    def _watch_workers(self, screen: Screen) -> None:
        """Hear the messages of ``screen`` (each screen once, however often it shows)."""
        screen.message_signal.unsubscribe(self)
        screen.message_signal.subscribe(self, self._screen_message, immediate=True)

    def _screen_message(self, message: Message) -> None:
        if isinstance(message, Worker.StateChanged):
            self.on_worker_state_changed(message)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that failed becomes a one-line error notification; the app stays open."""
        if event.state == WorkerState.ERROR:
            self.notify(worker_error_line(event.worker), severity="error", markup=False, timeout=10)

    # -- navigation ------------------------------------------------------------
    def open_capture(self, capture: "Capture", *, line: int | None = None) -> None:
        """Push the kernel view of ``capture`` (optionally at Python ``line``; without
        one, where its view was last left: stage, lines and scroll)."""
        from irscope.tui.kernel_nav import restore_view
        from irscope.tui.screens.kernel import KernelScreen

        screen = KernelScreen(capture, line=line)
        if line is None:
            restore_view(screen, self.kernel_views.get(capture.id))
        self.push_screen(screen)

    def open_passes(self, capture: "Capture", stage_name: str) -> None:
        """Push the pass stepper of ``capture`` on ``stage_name`` (the passes screen)."""
        try:
            from irscope.tui.screens.passes import PassStepperScreen
        except ImportError as exc:
            self.notify(f"the pass stepper is not available: {exc}", severity="error",
                        markup=False)
            return
        self.push_screen(PassStepperScreen(capture, stage_name))

    def open_diff(self, comparison, **screen_kwargs) -> None:
        """Push the diff screen of a :class:`irscope.diff.Comparison`."""
        try:
            from irscope.tui.screens.diff import DiffScreen
        except ImportError as exc:
            self.notify(f"the diff screen is not available: {exc}", severity="error", markup=False)
            return
        self.push_screen(DiffScreen(comparison, **screen_kwargs))

    def diff_captures(self, a: "Capture", b: "Capture") -> None:
        """Compare two captures in a worker, then open the diff screen."""
        from irscope.tui.screen_data import compare_in_worker

        self.notify(f"comparing {a.title()} with {b.title()}...", markup=False, timeout=3)
        compare_in_worker(self, a, b)

    # -- actions ---------------------------------------------------------------
    def action_help(self) -> None:
        """Show every key of the current screen."""
        from irscope.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_toggle_theme(self) -> None:
        """Switch between the light and the dark theme."""
        self.theme = LIGHT_THEME if self.dark else DARK_THEME


def make_app(bundle_path: "str | os.PathLike | Bundle", kernel: str | None = None, *,
             target: str | None = None, variant: str | int | None = None, diff=None, diff_sides=None,
             keymap: dict[str, str] | None = None) -> IrscopeApp:
    """Build the app on the bundle at ``bundle_path`` (or an open Bundle, whose parsed
    stages it then shares); ``kernel`` (with ``target`` and
    ``variant``) opens that capture's kernel view, ``diff`` (a Comparison) the diff screen,
    with ``diff_sides`` its two captures (A, B) when it compares captures.

    Raises IrscopeError (one line) for a bad bundle, kernel or keymap file, before any
    terminal is touched. ``keymap`` None reads the user's keymap file
    (:func:`load_keymap`); pass ``{}`` to ignore it (tests, snapshots).
    """
    from irscope.core import Bundle

    bundle = bundle_path if isinstance(bundle_path, Bundle) else open_bundle(str(bundle_path))
    capture = None
    if kernel is not None or target is not None or variant is not None:
        capture = bundle.capture(kernel, target=target, variant=variant)
    return IrscopeApp(bundle, capture=capture, diff=diff, diff_sides=diff_sides,
                      keymap=load_keymap() if keymap is None else keymap)
