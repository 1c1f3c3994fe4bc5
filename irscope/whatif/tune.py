"""The autotune explorer: compile one captured kernel once per configuration of a
grid, with no GPU, and tabulate what each configuration costs.

A grid is ``'BLOCK_M=64,128 num_warps=4,8 num_stages=2,3'``: keys are the kernel's
declared constexprs or the options of :data:`irscope.whatif.compile_spec.TUNABLE_OPTIONS`,
and its configurations are every combination (the last key varies fastest). Each
configuration is the captured compile (:func:`irscope.whatif.compile_spec.spec_of`:
same source, signature, specialisations, other constexprs and options) with the
grid's values put in, compiled for each target by a child process under the capture
machinery (capture/child/irscope_compile_grid.py), so each one is an ordinary capture
in the output bundle; a configuration that fails to compile is a failed capture and a
failed row. ``jobs`` children run at once, each importing Triton once for its share.

The kernel is compiled from its own file when that file still holds the captured
source (the same module globals, the same locations), else from the self-contained
module :func:`spec_of` rebuilds from the bundle alone. A script is captured first
(compile-only), and the tune starts from its capture of the kernel.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import tempfile
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import irscope
from irscope.capture.child.irscope_compile_kernel import constexpr_value
from irscope.capture.session import CHILD_DIR, CaptureRequest, TargetOutcome, run_capture, run_info
from irscope.compiler.records import CapturedKernel
from irscope.core.experiments import TUNE
from irscope.core.target import Target
from irscope.core.tune_table import TuneTable, config_label, tune_row
from irscope.core.user_functions import read_source_file
from irscope.errors import IrscopeError
from irscope.store.attachments import add_attachment
from irscope.store.bundle import Bundle as StoreBundle
from irscope.whatif.compile_spec import TUNABLE_OPTIONS, CompileSpec, spec_of

if TYPE_CHECKING:
    from irscope.core.capture import Capture

Value = int | float | bool | str
Progress = Callable[[int, int, str], None]
"""``on_progress(done, total, last)``: configurations compiled so far, of how many,
and the label of the last one."""

GRID_CHILD = os.path.join(CHILD_DIR, "irscope_compile_grid.py")


# -- the grid ------------------------------------------------------------------------

@dataclass(frozen=True)
class Grid:
    """Keys and the values each takes, in the order written."""

    axes: tuple[tuple[str, tuple[Value, ...]], ...]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(k for k, _ in self.axes)

    def configs(self) -> list[dict[str, Value]]:
        """Every combination, the last key varying fastest."""
        values = [v for _, v in self.axes]
        return [dict(zip(self.keys, combo)) for combo in itertools.product(*values)]

    def __len__(self) -> int:
        n = 1
        for _, v in self.axes:
            n *= len(v)
        return n



def parse_grid(text: str) -> Grid:
    """``'BLOCK_M=64,128 num_warps=4,8'`` -> a :class:`Grid`. Items are separated by
    spaces (or ``;``), values by commas; a key given twice, an item without ``=`` or a
    key without values is a one-line IrscopeError."""
    axes: list[tuple[str, tuple[Value, ...]]] = []
    seen: set[str] = set()
    for item in text.replace(";", " ").split():
        key, eq, values = item.partition("=")
        key = key.strip()
        if not eq or not key or not key.isidentifier():
            raise IrscopeError(f"--grid item {item!r}: expected KEY=V1,V2,... (e.g. BLOCK_M=64,128 num_warps=4,8)")
        if key in seen:
            raise IrscopeError(f"--grid key {key} is given twice")
        seen.add(key)
        vals = tuple(dict.fromkeys(constexpr_value(v.strip()) for v in values.split(",") if v.strip()))
        if not vals:
            raise IrscopeError(f"--grid key {key} has no values (e.g. {key}=64,128)")
        axes.append((key, vals))
    if not axes:
        raise IrscopeError("--grid is empty: give KEY=V1,V2,... items, e.g. 'BLOCK_M=64,128 num_warps=4,8'")
    return Grid(tuple(axes))


def tunable_keys(spec: CompileSpec) -> tuple[str, ...]:
    """What a grid may vary: the kernel's declared constexprs, then the tunable options."""
    return (*spec.declared_constexprs, *TUNABLE_OPTIONS)


def check_grid(grid: Grid, spec: CompileSpec) -> None:
    """One-line IrscopeError for a key that is neither a declared constexpr of the
    kernel nor a tunable option, naming the valid ones; and for an option value that is
    not a whole number."""
    valid = tunable_keys(spec)
    for key in grid.keys:
        if key not in valid:
            raise IrscopeError(f"--grid key {key} is not a constexpr of {spec.kernel} nor a tunable option "
                               f"(valid keys: {', '.join(valid)})")
    for key, values in grid.axes:
        if key in TUNABLE_OPTIONS:
            bad = [v for v in values if isinstance(v, bool) or not isinstance(v, int) or v < 1]
            if bad:
                raise IrscopeError(f"--grid {key}={bad[0]}: {key} takes whole numbers from 1 up")


# -- where the kernel is compiled from ---------------------------------------------------

def kernel_file(cap: "Capture", spec: CompileSpec, tmp: str, own_file: bool = True) -> tuple[str, str | None]:
    """(path of a Python file defining the kernel, a note or None). The kernel's own
    file when it still holds the captured source (and ``own_file``); else the
    self-contained module of ``spec`` written into ``tmp``."""
    src = cap.source
    if own_file and src.file and src.text:
        text = read_source_file(src.file, cap.run.cwd)
        if text is not None and src.text.strip() in text:
            path = src.file
            if not os.path.isabs(path) and not os.path.exists(path) and cap.run.cwd:
                path = os.path.join(cap.run.cwd, path)
            return os.path.abspath(path), None
    path = os.path.join(tmp, f"{spec.kernel}_tune_source.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(spec.source)
    if not own_file:
        where = f"{src.file} could not be loaded on its own"
    else:
        where = f"{src.file} no longer holds it" if src.file else "the capture names no file"
    return path, f"compiled from the source the bundle holds ({where})"


def _attrs(cap: "Capture", spec: CompileSpec) -> dict[str, list[list[Any]]]:
    """The parameter attributes of the captured compile, as Triton 3.3+ takes them
    (``{"X": [["tt.divisibility", 16], ["tt.pointer_range", 32]]}``): the recorded ones
    verbatim (AMD adds ``tt.pointer_range``), else divisibility from the spec."""
    recorded = cap.info.get("attrs")
    if isinstance(recorded, dict) and all(isinstance(v, list) for v in recorded.values()):
        out = {}
        for name, items in recorded.items():
            pairs = [list(i) for i in items if isinstance(i, list) and len(i) == 2 and isinstance(i[0], str)]
            if name in spec.params and pairs:
                out[name] = pairs
        if out or not spec.divisible:
            return out
    return {n: [["tt.divisibility", 16]] for n in spec.divisible}


def _child_spec(spec: CompileSpec, attrs: dict[str, list[list[Any]]], file: str,
                jobs: list[dict[str, Value]], report: str | None = None) -> dict[str, Any]:
    """The JSON the grid child reads: the captured compile, and one override set per
    job; ``report``: where it writes what it found of the kernel (its heuristics)."""
    return {"file": file, "report": report, "kernel": spec.kernel, "signature": spec.signature,
            "constexprs": spec.constexprs, "attrs": attrs, "options": dict(spec.options),
            "jobs": [{"label": config_label(c),
                      "constexprs": {k: v for k, v in c.items() if k not in TUNABLE_OPTIONS},
                      "options": {k: v for k, v in c.items() if k in TUNABLE_OPTIONS}} for c in jobs]}


def _matches(captured: CapturedKernel, kernel: str, config: dict[str, Value]) -> bool:
    """Whether a captured compile is the one of ``config`` (its recorded constexprs and
    options hold the configuration's values) of ``kernel``."""
    if captured.kernel != kernel:
        return False  # the kernel's file compiled another kernel when it was loaded
    for key, value in config.items():
        got = (captured.options if key in TUNABLE_OPTIONS else captured.constexprs).get(key)
        if str(got) != str(value):
            return False
    return True


# -- compiling -------------------------------------------------------------------------

@dataclass(frozen=True)
class _Share:
    """One child's work: some configurations on one target."""

    target: str
    configs: tuple[dict[str, Value], ...]


def _shares(configs: list[dict[str, Value]], targets: tuple[str, ...], jobs: int) -> list[_Share]:
    """The work split into ``jobs`` children's shares (one per target at least), each
    of one target, the configurations dealt round-robin so that each share gets a mix
    of small and large ones."""
    per_target = max(1, jobs // max(1, len(targets)))
    out: list[_Share] = []
    for target in targets:
        n = min(per_target, len(configs))
        for i in range(n):
            out.append(_Share(target, tuple(configs[i::n])))
    return out


def compile_grid(cap: "Capture", spec: CompileSpec, configs: list[dict[str, Value]], targets: tuple[str, ...],
                 out_path: str, jobs: int = 1, on_progress: Progress | None = None,
                 command: list[str] | None = None,
                 own_file: bool = True) -> tuple[dict[tuple[str, str], int], dict[tuple[str, str], str], list[str]]:
    """Compile every configuration on every target into ``out_path`` (from the kernel's
    own file unless ``own_file`` is False: :func:`kernel_file`). A child that dies in a
    compile (an LLVM abort) leaves that compile as a failed capture; the configurations
    it had not reached go to a new child.

    Returns ({(target, label): capture id in out_path}, {(target, label): why its child
    made no capture of it}, notes)."""
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="irscope-tune-") as tmp:
        file, note = kernel_file(cap, spec, tmp, own_file)
        if note:
            notes.append(note)
        grid = _Round(spec, _attrs(cap, spec), file, tmp, len(configs) * len(targets), on_progress,
                      command or ["irscope", "tune"], max(1, jobs))
        bundle = StoreBundle.open(out_path, create=True)
        try:
            pending = _shares(configs, targets, max(1, jobs))
            while pending:
                pending = grid.run(bundle, pending)
        finally:
            bundle.close()
        fixed = [n for n in grid.heuristics() if n not in (configs[0] if configs else {})]
        if fixed:
            notes.append(f"the kernel's @triton.heuristics set {', '.join(fixed)} from its launch arguments: every "
                         f"configuration keeps the captured value")
    return grid.found, grid.problems, notes


class _Round:
    """Runs shares of a grid in children at once, storing each capture as it comes."""

    def __init__(self, spec: CompileSpec, attrs: dict[str, list[list[Any]]], file: str, tmp: str, total: int,
                 on_progress: Progress | None, command: list[str], jobs: int = 1):
        self.spec, self.attrs, self.file, self.tmp = spec, attrs, file, tmp
        self.slots = threading.Semaphore(jobs)  # children running at once
        self.total, self.on_progress, self.command = total, on_progress, command
        self.found: dict[tuple[str, str], int] = {}
        self.problems: dict[tuple[str, str], str] = {}
        self.done = 0
        self.children = 0
        self.report = os.path.join(tmp, "kernel.json")

    def heuristics(self) -> list[str]:
        """The constexprs the kernel's ``@triton.heuristics`` set, as a child found them."""
        try:
            with open(self.report) as fh:
                names = json.load(fh).get("heuristics") or []
        except (OSError, ValueError):
            return []
        return [str(n) for n in names]

    def run(self, bundle: StoreBundle, shares: list[_Share]) -> list[_Share]:
        """Run ``shares`` to their ends; the shares still to do: the configurations a
        child that died after storing a capture had not reached."""
        requests: list[CaptureRequest] = []
        for share in shares:
            self.children += 1
            path = os.path.join(self.tmp, f"share{self.children}.json")
            with open(path, "w") as fh:
                json.dump(_child_spec(self.spec, self.attrs, self.file, list(share.configs), self.report), fh)
            requests.append(CaptureRequest(GRID_CHILD, [path], None, [share.target]))
        runs = [bundle.begin_run(run_info(req, self.command)) for req in requests]
        # (child, a capture | the child's outcome | an error to re-raise | None: the child is done)
        inbox: queue.Queue[tuple[int, CapturedKernel | TargetOutcome | Exception | None]] = queue.Queue()

        def work(i: int) -> None:
            try:
                with self.slots:
                    outcomes = run_capture(requests[i], lambda k: inbox.put((i, k)))
                for o in outcomes:
                    inbox.put((i, o))
            except (IrscopeError, OSError) as exc:  # the main thread re-raises it
                inbox.put((i, exc))
            finally:
                inbox.put((i, None))  # whatever happened: the main thread stops waiting for this child

        threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(len(requests))]
        for t in threads:
            t.start()
        running = len(threads)
        stored = [0] * len(threads)
        again: list[_Share] = []
        while running:
            i, item = inbox.get()
            share = shares[i]
            if item is None:
                running -= 1
            elif isinstance(item, Exception):
                raise item
            elif isinstance(item, TargetOutcome):
                problem = problem_of(item)
                if not stored[i] and problem:
                    bundle.discard_run(runs[i])  # it compiled nothing: its rows say why
                else:
                    bundle.finish_run(runs[i], complete=not item.interrupted, status=_status(item),
                                      error=problem, mode="compile-only", targets=[share.target])
                missing = tuple(c for c in share.configs if (share.target, config_label(c)) not in self.found)
                for c in missing:
                    if problem:
                        self.problems[(share.target, config_label(c))] = problem
                if missing and stored[i] and item.signal is not None and not item.interrupted:
                    again.append(_Share(share.target, missing))
            else:
                stored[i] += 1
                cid = bundle.add_capture(runs[i], item)
                label = next((config_label(c) for c in share.configs if _matches(item, self.spec.kernel, c)), None)
                if label is not None:
                    self.found[(share.target, label)] = cid
                self.done += 1
                if self.on_progress is not None:
                    self.on_progress(self.done, self.total, f"{label or item.variant} {item.target}")
        return again


def problem_of(outcome: TargetOutcome) -> str | None:
    """Why a grid child ended badly, in one line; None when it ran to its end."""
    err = outcome.script_error
    if err:
        return f"{err.get('type')}: {err.get('message')}"
    if outcome.signal is not None:
        from irscope.capture.session import signal_name

        return f"the compile was ended by {signal_name(outcome.signal)}"
    if outcome.interrupted:
        return "interrupted"
    if outcome.exit_code not in (0, None):
        return f"the compile exited with code {outcome.exit_code}"
    return None


def _status(outcome: TargetOutcome) -> str:
    if outcome.interrupted:
        return "interrupted"
    return "ok" if problem_of(outcome) is None else "failed"


# -- the whole exploration --------------------------------------------------------------

def tune(bundle_path: str, cap: "Capture", grid: Grid, targets: tuple[str, ...] = (), out_path: str | None = None,
         jobs: int = 1, on_progress: Progress | None = None, command: list[str] | None = None) -> TuneTable:
    """Compile every configuration of ``grid`` for ``targets`` (default: the capture's
    own) from the captured compile ``cap`` of ``bundle_path``, keep each compile as a
    capture in ``out_path`` (default: ``bundle_path``), and attach the table there
    (kind ``tune``). One-line IrscopeError for a grid key the kernel does not take."""
    spec = spec_of(cap)
    check_grid(grid, spec)
    targets = tuple(dict.fromkeys(Target.parse(t).name for t in targets)) or (Target.parse(cap.target).name,)
    out = out_path or bundle_path
    configs = grid.configs()
    found, problems, notes = compile_grid(cap, spec, configs, targets, out, jobs, on_progress, command)
    if not found and problems and not any(n.startswith("compiled from the source the bundle holds") for n in notes):
        # Loading the kernel's own file failed before any compile (a package's relative
        # import, a script that needs its arguments): the bundle's own source may do.
        first = next(iter(problems.values()))
        found, problems, notes = compile_grid(cap, spec, configs, targets, out, jobs, on_progress, command,
                                              own_file=False)
        notes.append(f"loading {cap.file} on its own failed: {first}")
    if any(n.startswith("compiled from the source the bundle holds") for n in notes):
        notes = [*spec.notes, *notes]  # what the rebuilt module could not define
    same_bundle = os.path.abspath(out) == os.path.abspath(bundle_path)
    with irscope.open(out) as view:
        versions = {c.triton_version for c in view.captures() if c.id in set(found.values())}
        if versions - {cap.triton_version}:
            notes.append(f"compiled with Triton {', '.join(sorted(v for v in versions if v))}; the base capture "
                         f"was made with {cap.triton_version}")
        rows = []
        for target in targets:
            for config in configs:
                cid = found.get((target, config_label(config)))
                row_cap = view.capture(f"#{cid}") if cid is not None else None
                why = None if row_cap is not None else (problems.get((target, config_label(config)))
                                                        or "the compile made no capture")
                rows.append(tune_row(config, target, row_cap, why))
    home = os.path.dirname(os.path.abspath(out))  # paths relative to the table's bundle: it travels with it
    table = TuneTable(kernel=cap.kernel, variant=cap.variant, base_capture_id=cap.id,
                      source=os.path.relpath(os.path.abspath(bundle_path), home),
                      captures=os.path.relpath(os.path.abspath(out), home), grid=grid.axes,
                      targets=targets, rows=tuple(rows), triton_version=cap.triton_version, notes=tuple(notes))
    bundle = StoreBundle.open(out, create=True)
    try:
        add_attachment(bundle, TUNE, cap.id if same_bundle else None,
                       f"{cap.kernel}: {len(configs)} configuration(s) x {', '.join(targets)}", table.to_json())
    finally:
        bundle.close()
    return table


def capture_script(script: str, kernel: str, targets: tuple[str, ...], out_path: str,
                   command: list[str] | None = None) -> list[int]:
    """Capture ``script`` compile-only (for ``targets``, default sm_90) into
    ``out_path``, as ``irscope run`` does; the ids of its captures of ``kernel``.
    One-line IrscopeError when the script compiled no such kernel."""
    if not os.path.isfile(script):
        raise IrscopeError(f"{script}: no such script")
    req = CaptureRequest(script, [], None, list(targets) or ["sm_90"])
    bundle = StoreBundle.open(out_path, create=True)
    ids: list[int] = []
    names: list[str] = []
    try:
        run_id = bundle.begin_run(run_info(req, command or ["irscope", "tune", script]))

        def keep(k: CapturedKernel) -> None:
            cid = bundle.add_capture(run_id, k)
            names.append(k.kernel)
            if k.kernel == kernel:
                ids.append(cid)

        outcomes = run_capture(req, keep)
        problem = next((p for p in (problem_of(o) for o in outcomes) if p), None)
        bundle.finish_run(run_id, complete=all(not o.interrupted for o in outcomes),
                          status="ok" if problem is None else "failed", error=problem, mode="compile-only",
                          targets=list(req.targets))
    finally:
        bundle.close()
    if not ids:
        compiled = ", ".join(dict.fromkeys(names)) or "none"
        why = f" ({problem})" if problem else ""
        raise IrscopeError(f"{script} compiled no kernel named {kernel} (it compiled: {compiled}){why}")
    return ids
