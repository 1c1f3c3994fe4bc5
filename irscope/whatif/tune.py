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
source (the same module globals, the same locations; the child loads it with its
launches doing nothing, and keeps only its own compiles), else from the
self-contained module :func:`spec_of` rebuilds from the bundle alone. The kernel's
``@triton.heuristics`` are computed again for each configuration, from its values
and the captured launch's arguments, as a launch of it would. A script is captured
first (compile-only), and the tune starts from its capture of the kernel.
"""

from __future__ import annotations

import ast
import json
import os
import queue
import re
import tempfile
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import irscope
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
from irscope.whatif.tune_grid import Grid, Value, check_grid, typed_grid

if TYPE_CHECKING:
    from irscope.core.capture import Capture

Progress = Callable[[int, int, str], None]
"""``on_progress(done, total, last)``: configurations compiled so far, of how many,
and the label of the last one."""

GRID_CHILD = os.path.join(CHILD_DIR, "irscope_compile_grid.py")


# -- where the kernel is compiled from ---------------------------------------------------

def kernel_file(cap: "Capture", spec: CompileSpec, tmp: str, own_file: bool = True) -> tuple[str, str | None]:
    """(path of a Python file defining the kernel, a note or None). The kernel's own
    file when it still holds the captured source (and ``own_file``); else the
    self-contained module of ``spec`` written into ``tmp``, with the kernel's
    ``@triton.heuristics`` taken from its file when the file is still there
    (:func:`with_heuristics`)."""
    src = cap.source
    text = read_source_file(src.file, cap.run.cwd) if src.file and src.text else None
    if text is not None and (src.text or "").strip() not in text:
        text = None  # edited since the capture
    if own_file and src.file and text is not None:
        path = src.file
        if not os.path.isabs(path) and not os.path.exists(path) and cap.run.cwd:
            path = os.path.join(cap.run.cwd, path)
        return os.path.abspath(path), None
    path = os.path.join(tmp, f"{spec.kernel}_tune_source.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(with_heuristics(spec.source, spec.kernel, text))
    if not own_file:
        where = f"{src.file} could not be loaded on its own"
    else:
        where = f"{src.file} no longer holds it" if src.file else "the capture names no file"
    if text is None:
        where += ("; the bundle holds no decorators: constexprs a @triton.heuristics of the kernel set, if it has "
                  "one, keep their captured values")
    return path, f"compiled from the source the bundle holds ({where})"


def heuristics_decorators(text: str, kernel: str) -> list[str]:
    """The ``@triton.heuristics({"NAME": lambda args: ...})`` decorators of the
    top-level ``def kernel`` of the Python source ``text``, as written (outermost
    first). Only a dict of lambdas spelled ``triton.heuristics`` is taken: the rebuilt
    module imports ``triton`` alone, and a lambda reads the names it uses only when it
    is called (a missing one fails that heuristic, not the module)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    out: list[str] = []
    for node in tree.body:
        if not (isinstance(node, ast.FunctionDef) and node.name == kernel):
            continue
        for d in node.decorator_list:
            if not (isinstance(d, ast.Call) and ast.unparse(d.func) == "triton.heuristics" and len(d.args) == 1
                    and not d.keywords and isinstance(d.args[0], ast.Dict)
                    and all(isinstance(v, ast.Lambda) for v in d.args[0].values)):
                continue
            seg = ast.get_source_segment(text, d)
            if seg is not None:
                out.append(f"@{seg}")
    return out


def with_heuristics(source: str, kernel: str, file_text: str | None) -> str:
    """``source`` (the self-contained module of :func:`spec_of`, whose kernel is a plain
    ``@triton.jit``) with the kernel's ``@triton.heuristics`` decorators of its file put
    back, so that the grid child computes them for each configuration as a launch does."""
    decorators = heuristics_decorators(file_text, kernel) if file_text else []
    head = f"@triton.jit\ndef {kernel}("
    if not decorators or head not in source:
        return source
    return source.replace(head, "\n".join(decorators) + "\n" + head, 1)


# How the capture names an element of a tuple parameter: Triton's path ``(2, 1)`` as text.
_TUPLE_PATH = re.compile(r"^\(\s*\d+\s*(,\s*\d+\s*)*,?\s*\)$")


def _signature(cap: "Capture", spec: CompileSpec) -> dict[str, Any]:
    """The signature the grid child gives Triton: the spec's, with a tuple parameter's
    element types as the capture recorded them (nested lists)."""
    sig: dict[str, Any] = dict(spec.signature)
    recorded = cap.info.get("signature")
    if isinstance(recorded, dict):
        for name, typ in recorded.items():
            if isinstance(typ, list) and name in sig:
                sig[name] = typ
    return sig


def _constexprs(cap: "Capture", spec: CompileSpec) -> dict[str, Any]:
    """The constants the grid child gives Triton: the spec's, and the elements of tuple
    parameters Triton made constants, by their path as the capture names them."""
    return {**spec.constexprs, **{k: v for k, v in cap.constexprs.items() if _TUPLE_PATH.match(k)}}


def _attrs(cap: "Capture", spec: CompileSpec) -> dict[str, list[list[Any]]]:
    """The parameter attributes of the captured compile, as Triton 3.3+ takes them
    (``{"X": [["tt.divisibility", 16], ["tt.pointer_range", 32]]}``): the recorded ones
    verbatim (AMD adds ``tt.pointer_range``), else divisibility from the spec."""
    recorded = cap.info.get("attrs")
    if isinstance(recorded, dict) and all(isinstance(v, list) for v in recorded.values()):
        out = {}
        for name, items in recorded.items():
            pairs = [list(i) for i in items if isinstance(i, list) and len(i) == 2 and isinstance(i[0], str)]
            if (name in spec.params or _TUPLE_PATH.match(name)) and pairs:
                out[name] = pairs
        if out or not spec.divisible:
            return out
    return {n: [["tt.divisibility", 16]] for n in spec.divisible}


def launch_args(spec: CompileSpec) -> dict[str, dict[str, Any]]:
    """The captured launch's arguments as the grid child gives them to the kernel's
    heuristics: ``{"value": n}`` for a number, ``{"shape", "stride", "dtype"}`` for a
    tensor; the arguments the capture has no record of are left out."""
    out: dict[str, dict[str, Any]] = {}
    for a in spec.args:
        if a.constexpr or a.equal_to_1:
            continue  # the job's constexprs give these
        if a.shape is not None:
            out[a.name] = {"shape": list(a.shape), "stride": list(a.stride) if a.stride is not None else None,
                           "dtype": a.dtype}
        elif not a.pointer and isinstance(a.value, (int, float)) and not isinstance(a.value, bool):
            out[a.name] = {"value": a.value}
    for a in spec.args:
        if a.equal_to_1:
            out[a.name] = {"value": 1}  # passed as 1 at the launch: Triton made it a constant
    return out


def _child_spec(spec: CompileSpec, attrs: dict[str, list[list[Any]]], file: str,
                jobs: list[dict[str, Value]], report: str | None = None,
                signature: dict[str, Any] | None = None, constexprs: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON the grid child reads: the captured compile, the captured launch's
    arguments (for the kernel's heuristics), and one override set per job;
    ``report``: where it writes what it found of the kernel (its heuristics, and what
    they set for each job). A key that is both a constexpr of the kernel and an option
    (a ``num_stages: tl.constexpr`` parameter) sets both, as a launch that passes it by
    name does."""
    declared = spec.declared_constexprs
    return {"file": file, "report": report, "kernel": spec.kernel, "signature": signature or spec.signature,
            "constexprs": spec.constexprs if constexprs is None else constexprs, "attrs": attrs,
            "options": dict(spec.options),
            "launch": launch_args(spec),
            "jobs": [{"label": config_label(c),
                      "constexprs": {k: v for k, v in c.items() if k in declared or k not in TUNABLE_OPTIONS},
                      "options": {k: v for k, v in c.items() if k in TUNABLE_OPTIONS}} for c in jobs]}


def _matches(captured: CapturedKernel, kernel: str, config: dict[str, Value]) -> bool:
    """Whether a captured compile is the one of ``config`` (its recorded constexprs and
    options hold the configuration's values) of ``kernel``: a compile the child made,
    not one a launch of the kernel's file made as it was loaded (those record their
    launch)."""
    if captured.kernel != kernel or captured.launch is not None:
        return False  # the kernel's file compiled it when it was loaded
    for key, value in config.items():
        got = (captured.options if key in TUNABLE_OPTIONS else captured.constexprs).get(key)
        if str(got) != str(value) and _function_name(got) != str(value):
            return False
    return True


_FUNCTION = re.compile(r"^JITFunction\([\w.]*:(?:[\w.<>]+\.)?(\w+)\)$")


def _function_name(value: object) -> str | None:
    """``relu`` for a ``@triton.jit`` function passed as a constexpr, as a capture
    records it (``JITFunction(module:relu)``): a grid names it so."""
    m = _FUNCTION.match(value) if isinstance(value, str) else None
    return m.group(1) if m else None


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
                      command or ["irscope", "tune"], max(1, jobs), _signature(cap, spec), _constexprs(cap, spec))
        bundle = StoreBundle.open(out_path, create=True)
        try:
            pending = _shares(configs, targets, max(1, jobs))
            while pending:
                pending = grid.run(bundle, pending)
        finally:
            bundle.close()
        notes += grid.heuristics_notes(configs[0] if configs else {})
    return grid.found, grid.problems, notes


class _Round:
    """Runs shares of a grid in children at once, storing each capture as it comes."""

    def __init__(self, spec: CompileSpec, attrs: dict[str, list[list[Any]]], file: str, tmp: str, total: int,
                 on_progress: Progress | None, command: list[str], jobs: int = 1,
                 signature: dict[str, Any] | None = None, constexprs: dict[str, Any] | None = None):
        self.spec, self.attrs, self.file, self.tmp = spec, attrs, file, tmp
        self.signature, self.constexprs = signature, constexprs  # the child's: tuple parameters' elements too
        self.slots = threading.Semaphore(jobs)  # children running at once
        self.total, self.on_progress, self.command = total, on_progress, command
        self.found: dict[tuple[str, str], int] = {}
        self.problems: dict[tuple[str, str], str] = {}
        self.done = 0
        self.children = 0
        self.reports: list[str] = []  # each child's: what the kernel's heuristics set for its jobs

    def heuristics_notes(self, grid_keys: dict[str, Value]) -> list[str]:
        """What the kernel's ``@triton.heuristics`` did, as the children report it: the
        constexprs computed again for each configuration, and those that kept the
        captured value (and why). Heuristics the grid sets are the grid's."""
        names: list[str] = []
        kept: dict[str, str] = {}
        descs: list[str] = []
        hooked = False
        hook_failed: str | None = None
        for path in self.reports:
            try:
                with open(path) as fh:
                    report = json.load(fh)
            except (OSError, ValueError):
                continue  # the child died before it loaded the kernel
            names += [str(n) for n in report.get("heuristics") or [] if n not in names and n not in grid_keys]
            descs += [str(n) for n in report.get("descriptors") or [] if n not in descs]
            hooked = hooked or bool(report.get("pre_hook"))
            for job in report.get("jobs") or []:
                for name, why in (job.get("kept") or {}).items():
                    kept.setdefault(str(name), str(why))
                hook_failed = hook_failed or job.get("descriptors_kept")
        notes = self._descriptor_notes(descs, hooked, hook_failed)
        computed = [n for n in names if n not in kept]
        if computed:
            notes.append(f"the kernel's @triton.heuristics computed {', '.join(computed)} again for each "
                         f"configuration, from the captured launch's arguments")
        if kept:
            why = "; ".join(f"{n}: {w}" for n, w in kept.items())
            notes.append(f"the kernel's @triton.heuristics set {', '.join(kept)} from launch arguments the capture "
                         f"does not hold ({why}): those configurations keep the captured value")
        return notes

    def _descriptor_notes(self, descs: list[str], hooked: bool, failed: str | None) -> list[str]:
        """What became of the block shapes of the kernel's tensor descriptor parameters
        (part of their type): set for each configuration by the autotuner's config
        ``pre_hook``, as a launch sets them, or kept as captured."""
        if not descs:
            return []
        names = ", ".join(descs)
        if hooked and failed is None:
            return [f"the autotuner's pre_hook set the block shapes of the tensor descriptors {names} for each "
                    f"configuration"]
        if hooked:
            return [f"the autotuner's pre_hook failed to set the block shapes of the tensor descriptors {names} "
                    f"({failed}): those configurations keep the captured block shapes"]
        return [f"no autotuner pre_hook sets the block shapes of the tensor descriptors {names}: every configuration "
                f"keeps the captured ones, where a launch that builds them from the constexprs would not"]

    def run(self, bundle: StoreBundle, shares: list[_Share]) -> list[_Share]:
        """Run ``shares`` to their ends; the shares still to do: the configurations a
        child that died after storing a capture had not reached."""
        requests: list[CaptureRequest] = []
        for share in shares:
            self.children += 1
            path = os.path.join(self.tmp, f"share{self.children}.json")
            report = os.path.join(self.tmp, f"share{self.children}.report.json")
            self.reports.append(report)
            with open(path, "w") as fh:
                json.dump(_child_spec(self.spec, self.attrs, self.file, list(share.configs), report,
                                      self.signature, self.constexprs), fh)
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
                label = next((config_label(c) for c in share.configs if _matches(item, self.spec.kernel, c)), None)
                if label is None:
                    continue  # a compile the kernel's file made as it was loaded: not the grid's
                stored[i] += 1
                self.found[(share.target, label)] = bundle.add_capture(runs[i], item)
                self.done += 1
                if self.on_progress is not None:
                    self.on_progress(self.done, self.total, f"{label} {item.target}")
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
    grid = typed_grid(grid, spec)
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
