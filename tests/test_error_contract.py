"""The error contract: readers of untrusted text never raise, through one guard that
the strict mode can turn off; nothing else in irscope/ swallows every exception."""

from __future__ import annotations

import ast
import contextlib
from pathlib import Path

import pytest

from irscope import text_guard
from irscope.ir import parse_guard, parse_stage

PKG = Path(__file__).resolve().parent.parent / "irscope"

# Files whose handlers may catch every exception, each handler with a comment on
# its `except` line saying why. Nothing else in irscope/ may.
EDGES = {
    # The guard itself: the one place a reader's bug is turned into a degraded result.
    "text_guard.py": "the never-raise guard (it re-raises in the strict mode)",
    # The command line: bad input becomes a one-line error and a non-zero exit.
    "cli/main.py": "command-line edge",
    # The app: a worker's error becomes a notification, and the app stays open.
    "tui/app.py": "app edge",
    # Loaded into the user's own Python process by the capture (sitecustomize, the
    # compile hook, the bootstrap): irscope must never break the user's script, and
    # Triton's internals there may raise anything.
    "capture/child/irscope_child_hook.py": "runs inside the user's process",
    "capture/child/irscope_child_record.py": "writes a compile's progress inside the user's process",
    "capture/child/irscope_child_launch.py": "reads the user's launch arguments inside the user's process",
    "capture/child/irscope_load_reports.py": "patches Triton's kernel loading inside the user's process",
    "capture/child/irscope_child_globals.py": "reads the user's objects inside the user's process",
    "capture/child/irscope_bootstrap.py": "runs the user's script",
    "capture/child/sitecustomize.py": "runs inside the user's process",
    "capture/child/irscope_fake_driver.py": "patches Triton inside the user's process",
    # irscope tune's child: Triton may raise anything for one configuration, and the grid goes on.
    "capture/child/irscope_compile_grid.py": "one configuration's compile",
    # irscope compile's and tune's children load the user's file as a module: it may raise anything.
    "capture/child/irscope_compile_kernel.py": "runs the user's file as a module",
    "capture/child/irscope_replay.py": "one replay job's compile (the next job still runs)",
}

_BROAD = {"Exception", "BaseException"}


def _is_broad(handler: ast.ExceptHandler) -> bool:
    """``except:``, ``except Exception``, ``except BaseException`` (alone or in a tuple)."""
    t = handler.type
    if t is None:
        return True
    names = t.elts if isinstance(t, ast.Tuple) else [t]
    return any(isinstance(n, ast.Name) and n.id in _BROAD
               or isinstance(n, ast.Attribute) and n.attr in _BROAD for n in names)


def _reraises(handler: ast.ExceptHandler) -> bool:
    """Cleanup then raise, nothing swallowed: the body ends in a ``raise`` and never
    leaves the handler another way."""
    if not handler.body or not isinstance(handler.body[-1], ast.Raise):
        return False
    return not any(isinstance(n, (ast.Return, ast.Break, ast.Continue))
                   for stmt in handler.body for n in ast.walk(stmt))


def broad_handlers(root: Path = PKG) -> list[tuple[str, int, str]]:
    """``(file relative to root, line, source line)`` of every handler that catches
    every exception without re-raising it."""
    out = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text()
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ExceptHandler) and _is_broad(node) and not _reraises(node):
                out.append((path.relative_to(root).as_posix(), node.lineno, lines[node.lineno - 1].strip()))
    return out


def test_no_broad_except_outside_the_edges():
    stray = [f"{f}:{n}: {line}" for f, n, line in broad_handlers() if f not in EDGES]
    assert not stray, ("catch the real exception types, or go through text_guard.never_raise "
                       "(which honours the strict mode):\n" + "\n".join(stray))


def test_every_edge_handler_says_why():
    silent = [f"{f}:{n}: {line}" for f, n, line in broad_handlers() if f in EDGES and "#" not in line]
    assert not silent, "a broad except at an edge needs a comment on its line:\n" + "\n".join(silent)


def test_the_edge_list_names_real_files():
    assert all((PKG / f).is_file() for f in EDGES)


def test_the_scan_sees_every_broad_form(tmp_path):
    (tmp_path / "m.py").write_text(
        "try:\n    pass\nexcept:\n    pass\n"
        "try:\n    pass\nexcept (ValueError, Exception):\n    pass\n"
        "try:\n    pass\nexcept builtins.BaseException as e:\n    x = e\n"
        "try:\n    pass\nexcept Exception:\n    cleanup()\n    raise\n"           # re-raises: fine
        "try:\n    pass\nexcept Exception:\n    if ok():\n        return 1\n    raise\n"  # may swallow
        "try:\n    pass\nexcept (KeyError, ValueError):\n    pass\n")              # narrow: fine
    assert [n for _, n, _ in broad_handlers(tmp_path)] == [3, 7, 11, 20]


# -------------------------------------------------------------- the one guard
def _double(text: str, factor: int = 2) -> str:
    return text * factor


def test_never_raise_degrades_or_raises_in_the_strict_mode():
    calls = []

    def fallback(text: str, factor: int = 2) -> str:
        calls.append((text, factor))
        return "fallback"

    @text_guard.never_raise(fallback)
    def reader(text: str, factor: int = 2) -> str:
        return text[100] * factor  # IndexError on short text: a reader bug

    assert reader("abc", factor=3) == "fallback" and calls == [("abc", 3)]
    with text_guard.strict():
        assert text_guard.STRICT
        with pytest.raises(IndexError):
            reader("abc")
    assert text_guard.STRICT is False  # restored


def test_strict_restores_after_an_error():
    with pytest.raises(RuntimeError), text_guard.strict():
        raise RuntimeError("inside")
    assert text_guard.STRICT is False


def test_the_parser_guard_is_text_guards_guard(monkeypatch):
    """parse_guard has no handler of its own: its fallback is the opaque module, the
    catching (and the strict mode) is text_guard's."""
    tree = ast.parse(Path(parse_guard.__file__).read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Try)]

    from irscope.ir import sass

    def bug(raw: str) -> tuple:
        raise IndexError("a classifier bug")

    monkeypatch.setattr(sass, "classify", bug)
    text = "        /*0000*/                   MOV R1, c[0x0][0x28] ;"
    mod = parse_stage("sass", text)  # the per-line guard: the line unknown, no traceback
    assert [op.name for op in mod.ops()] == ["<unknown>"] and mod.unknown == [(1, text)]
    with text_guard.strict(), pytest.raises(IndexError):
        parse_stage("sass", text)


# -------------------------------------------------------------- the app's workers
async def settle(pilot) -> None:
    """Let the workers end and their messages land (waiting on a failed worker raises
    WorkerFailed to the waiter, the test here, not to the app)."""
    from textual.worker import WorkerFailed

    for _ in range(3):
        with contextlib.suppress(WorkerFailed):
            await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def test_every_worker_in_the_app_keeps_it_open():
    """Each @work and run_worker in irscope/tui passes exit_on_error=False: the app's
    Worker.StateChanged handler then reports the error instead of Textual closing."""
    missing = []
    for path in sorted((PKG / "tui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name not in ("work", "run_worker"):
                continue
            kept_open = any(k.arg == "exit_on_error" and isinstance(k.value, ast.Constant) and k.value.value is False
                            for k in node.keywords)
            if not kept_open:
                missing.append(f"{path.relative_to(PKG)}:{node.lineno}")
    assert not missing, missing


def test_a_failing_stage_read_is_one_notification_and_the_app_stays_open(monkeypatch):
    import asyncio

    from irscope.core.capture import Capture
    from irscope.tui.app import make_app
    from irscope.tui.screens.kernel import KernelScreen

    from conftest import DATA

    real_read = Capture._read_stage

    def failing_read(self: Capture, name: str):
        if name == "source":  # the Python source pane still shows: only IR stage reads fail
            return real_read(self, name)
        raise RuntimeError("disk [bold]gone[/bold]\nwhile reading")  # markup and a newline: shown as text

    monkeypatch.setattr(Capture, "_read_stage", failing_read)

    async def scenario() -> None:
        app = make_app(DATA / "samples_sm90.irscope", "matmul_kernel", variant="1", keymap={})
        shown: list[tuple[str, dict]] = []
        real_notify = app.notify

        def notify(message: str, **kw) -> None:
            shown.append((message, kw))
            real_notify(message, **kw)

        monkeypatch.setattr(app, "notify", notify)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            assert isinstance(app.screen, KernelScreen) and app.is_running
            errors = [(m, kw) for m, kw in shown if kw.get("severity") == "error"]
            assert errors, shown
            for message, kw in errors:
                assert "\n" not in message and kw.get("markup") is False
                assert "RuntimeError: disk [bold]gone[/bold] while reading" in message
            await pilot.press("escape")  # the app still answers keys
            await pilot.pause()
            assert app.is_running and not isinstance(app.screen, KernelScreen)
        assert app.return_code in (0, None)  # closed by the test, not by a worker's error

    asyncio.run(scenario())


def test_every_fallback_takes_its_readers_arguments():
    """A fallback is called with the reader's own arguments: one that cannot take them
    would turn a degraded result into a TypeError, only when a reader fails."""
    import importlib
    import inspect
    import pkgutil

    import irscope

    for info in pkgutil.walk_packages(irscope.__path__, "irscope."):
        # (capture.child is loaded into the user's process, not imported here; __main__ runs the CLI)
        if ".capture.child" not in info.name and not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    assert len(text_guard.GUARDED) >= 10
    wrong = []
    for fn, fallback in text_guard.GUARDED:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        try:
            inspect.signature(fallback).bind(*params)
        except TypeError as exc:
            wrong.append(f"{fn.__module__}.{fn.__qualname__}: {exc}")
    assert not wrong, wrong


def test_a_failing_app_worker_is_one_notification_too(monkeypatch):
    """The app's own workers (comparing two captures) report through the same handler."""
    import asyncio

    from irscope.diff import compare as compare_module
    from irscope.tui.app import make_app

    from conftest import DATA

    def failing_compare(*args, **kwargs):
        raise KeyError("no [red]such[/red] pass")

    monkeypatch.setattr(compare_module, "compare_captures", failing_compare)

    async def scenario() -> None:
        app = make_app(DATA / "samples_sm90.irscope", keymap={})
        shown: list[tuple[str, dict]] = []
        real_notify = app.notify

        def notify(message: str, **kw) -> None:
            shown.append((message, kw))
            real_notify(message, **kw)

        monkeypatch.setattr(app, "notify", notify)
        async with app.run_test(size=(120, 40)) as pilot:
            a, b = list(app.bundle)[:2]
            app.diff_captures(a, b)
            await settle(pilot)
            errors = [m for m, kw in shown if kw.get("severity") == "error" and kw.get("markup") is False]
            assert errors == ["compare captures failed: KeyError: 'no [red]such[/red] pass'"]
            assert app.is_running
        assert app.return_code in (0, None)

    asyncio.run(scenario())
