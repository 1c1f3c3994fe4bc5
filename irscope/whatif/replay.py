"""Replays: recompile a captured kernel from the IR of one of its stages, not from Python.

A replay writes the captured TTIR (``from_stage="ttir"``: the TTGIR pipeline and
every later stage run again) or TTGIR (``"ttgir"``: the LLVM lowering onwards) to a
file, and has Triton compile that file in a child process (any Triton:
``python``), with options set (``num_stages=2``), the target changed, and passes
left out of the pipeline (Triton's stage hook, 3.6+). The child runs under the
capture machinery, so each replay is an ordinary capture in the output bundle,
stamped with what was changed (attachment kind ``replay``, and the capture's notes).
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import sys
import tempfile
import threading
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable

from irscope.capture.helper_sources import helper_sources
from irscope.capture.ingest import variant_label
from irscope.capture.session import CHILD_DIR, CaptureRequest, TargetOutcome, run_capture, run_info
from irscope.compiler.records import CapturedKernel, FunctionSource
from irscope.compiler.stages import SOURCE, TTGIR, TTIR
from irscope.core.target import Target
from irscope.errors import IrscopeError
from irscope.store.attachments import add_attachment
from irscope.store.bundle import Bundle as StoreBundle

# The request and its checks live in replay_request; they are part of this module's API too.
from irscope.whatif.replay_request import (EDITED_STAGE, FROM_STAGES, FRONTEND_OPTIONS, ReplayRequest,  # noqa: F401
                                           check_request, known_passes, loop_stages_constexpr, option_value,
                                           parse_set, settable_options)

if TYPE_CHECKING:
    from irscope.core.capture import Capture


@dataclass(frozen=True, slots=True)
class ReplayOutcome:
    """How one replay ended."""

    request: ReplayRequest
    capture_id: int | None
    """The replay's capture in the output bundle (a failed compile is a failed
    capture too); None when nothing was captured (the IR could not be read)."""
    ok: bool
    """The compile ran to its end."""
    error: str | None = None
    """One line: why it failed."""
    failed_stage: str | None = None
    failed_pass: str | None = None
    dropped: tuple[str, ...] = ()
    """The passes actually left out (a pass named but absent from the pipeline is not here)."""
    triton: str | None = None
    """The version of the Triton that compiled the replay."""
    original_triton: str | None = None
    """The version of the Triton that compiled the original capture."""

    def version_note(self) -> str | None:
        """A line saying that the replay and its original were compiled by different
        Tritons, else None (:func:`version_note`)."""
        return version_note(self.triton, self.original_triton)

    def to_json(self) -> dict:
        """The ``irscope replay --json`` object."""
        return {
            "bundle": self.request.bundle,
            "capture_id": self.request.capture_id,
            "from": self.request.from_stage,
            "sets": dict(self.request.sets),
            "target": self.request.target,
            "without": list(self.request.without),
            "python": self.request.python,
            "replay_id": self.capture_id,
            "ok": self.ok,
            "error": self.error,
            "failed_stage": self.failed_stage,
            "failed_pass": self.failed_pass,
            "dropped": list(self.dropped),
            "triton": self.triton,
            "original_triton": self.original_triton,
        }


def version_note(triton: str | None, original: str | None) -> str | None:
    """A line saying that a replay (compiled by Triton ``triton``) and its original
    (by ``original``) were compiled by different Tritons, so that not every difference
    between them is the replay's change; None when they were not, or one is unknown."""
    if not triton or not original or triton == original:
        return None
    return (f"the original was compiled with Triton {original}, this replay with {triton}: part of any difference "
            f"comes from the versions (--python picks the Triton)")


ProgressFn = Callable[[int, int, ReplayOutcome], None]
"""``on_progress(done, total, outcome)``: called once per finished replay."""


REPLAY_SCRIPT = os.path.join(CHILD_DIR, "irscope_replay.py")
STAMP_KIND = "replay"
"""The attachment kind of a replay's stamp."""

_LOOP_STAGES = re.compile(r"(\btt\.num_stages\s*=\s*)(\d+)(\s*:\s*i32)")


_MAXNREG = re.compile(r"\bttg\.maxnreg\s*=\s*\d+\s*:\s*i32")
_MODULE_ATTRS = re.compile(r"^(\s*module\s+attributes\s*\{)", re.M)


def _edited_ir(text: str, req: ReplayRequest, cap: "Capture") -> str:
    """The IR to replay, with what the pipeline before it would have written for the
    options set:

    - from TTIR, where ``--set num_stages`` also sets the kernel's constexpr of that
      name (:func:`loop_stages_constexpr`), its loops' ``tt.num_stages`` attributes
      take the new value, as a compile of the script with it would give;
    - from TTGIR, ``--set maxnreg`` becomes the module's ``ttg.maxnreg`` attribute
      (the TTGIR pipeline writes it there; the LLVM lowering reads it)."""
    for key, value in req.sets:
        if key in cap.constexprs and req.from_stage == TTIR:
            old, new = str(cap.constexprs[key]), str(option_value(value))
            text = _LOOP_STAGES.sub(lambda m: m.group(1) + (new if m.group(2) == old else m.group(2)) + m.group(3),
                                    text)
        if key == "maxnreg" and req.from_stage == TTGIR:
            attr = f"ttg.maxnreg = {int(option_value(value))} : i32"
            if _MAXNREG.search(text):
                text = _MAXNREG.sub(attr, text, count=1)
            else:
                text = _MODULE_ATTRS.sub(lambda m: f"{m.group(1)}{attr}, ", text, count=1)
    return text


def _job(req: ReplayRequest, cap: "Capture", index: int, ir_path: str) -> dict:
    """The child's job for one request (irscope_replay.py reads it)."""
    options = {k: v for k, v in cap.options.items() if k in settable_options(cap) and v is not None}
    options.update({k: option_value(v) for k, v in req.sets})
    return {
        "index": index,
        "ir": ir_path,
        "target": Target.parse(req.target).name if req.target else cap.target,
        "options": options,
        "without": list(req.without),
        "edit_stage": EDITED_STAGE[req.from_stage],
    }


@dataclass
class _Original:
    """What a replay keeps of its original capture (read once, in the calling thread)."""

    cap_id: int
    kernel: str
    variant: str
    target: str
    file: str | None
    first_line: int | None
    source_text: str | None
    source_ir: str | None
    signature: dict
    constexprs: dict
    attrs: dict
    triton: str | None = None
    helpers: list[FunctionSource] = field(default_factory=list)


def _original(cap: "Capture") -> _Original:
    """What a replay of ``cap`` takes from it: names, source, signature, helpers."""
    src = cap.source
    source_ir = cap.stage(SOURCE).text if SOURCE in cap.stages else None
    with StoreBundle.open(cap.bundle.path) as store:
        helpers = [FunctionSource(*row) for row in store.helper_sources(cap.id)]
    return _Original(cap.id, cap.kernel, cap.variant, cap.target, src.file, src.first_line, src.text,
                     source_ir if isinstance(source_ir, str) else None, dict(cap.info.get("signature") or {}),
                     dict(cap.constexprs), dict(cap.info.get("attrs") or {}), cap.triton_version, helpers)


def _as_replay(k: CapturedKernel, orig: _Original, req: ReplayRequest, dropped: list[str],
               version_note: str | None = None) -> CapturedKernel:
    """The child's capture of a replay, named as its original (kernel, source,
    signature) and noting what changed; the variant label is the replay's own."""
    options = {key: v for key, v in k.options.items() if key != "irscope_replay_job"}
    stages = dict(k.stages)
    if orig.source_ir is not None and SOURCE not in stages:
        stages[SOURCE] = orig.source_ir
    note = f"replay of #{orig.cap_id} {orig.kernel} [{orig.variant}] {orig.target}: {req.label()}"
    if dropped:
        note += f" (left out: {', '.join(dropped)})"
    missing = [p for p in req.without if p not in dropped]
    notes = [note] + list(k.notes)
    if missing:
        notes.append(f"not in this replay's pipeline, so not left out: {', '.join(missing)}")
    if version_note:
        notes.append(version_note)
    helpers = orig.helpers or (helper_sources(orig.source_ir, orig.file, orig.first_line) if orig.source_ir else [])
    # a constexpr set with the option of its name (loop_stages_constexpr) takes the new value
    constexprs = {**orig.constexprs, **{key: option_value(v) for key, v in req.sets if key in orig.constexprs}}
    return replace(k, kernel=orig.kernel, file=orig.file, first_line=orig.first_line, source=orig.source_text,
                   signature=orig.signature, constexprs=constexprs, attrs=orig.attrs, options=options,
                   variant=variant_label(constexprs, options), stages=stages, notes=notes, helpers=helpers)


def _stamp(req: ReplayRequest, orig: _Original, dropped: list[str], triton: str | None) -> dict:
    return {"source_bundle": os.path.abspath(req.bundle), "source_capture": orig.cap_id, "kernel": orig.kernel,
            "variant": orig.variant, "from": req.from_stage, "sets": dict(req.sets), "target": req.target,
            "without": list(req.without), "dropped": dropped, "python": req.python, "triton": triton}


def replay_many(requests: list[ReplayRequest], out_path: str, jobs: int = 1,
                on_progress: ProgressFn | None = None, *, command: list[str] | None = None) -> list[ReplayOutcome]:
    """Run every replay, writing each as a capture into the bundle ``out_path``
    (created if need be); outcomes in the order of ``requests``.

    Every request is checked first (:func:`check_request`): bad input raises
    IrscopeError before anything runs. The replays run in ``jobs`` child processes
    (each imports Triton once and compiles its share in turn); a replay that fails
    to compile is a failed capture and a failed outcome, never an exception. A
    Triton that cannot do what is asked at all (no stage hook for ``without``, no
    Triton in ``python``) raises IrscopeError. ``command`` is the command line the
    bundle's run records (default: this process's ``irscope`` arguments)."""
    import irscope
    from irscope.core.bundle import Bundle as CoreBundle

    if not requests:
        return []
    origs: list[_Original] = []
    known: dict[tuple[str, int], _Original] = {}
    views: dict[str, CoreBundle] = {}  # each input bundle opened once (an ablation replays one capture ~30 times)
    tmp = tempfile.mkdtemp(prefix="irscope-replay-")
    try:
        job_specs: list[dict] = []
        for i, req in enumerate(requests):
            if req.bundle not in views:
                views[req.bundle] = irscope.open(req.bundle)
            cap = views[req.bundle].capture(f"#{req.capture_id}")
            check_request(req, cap)
            key = (req.bundle, req.capture_id)
            if key not in known:
                known[key] = _original(cap)
            origs.append(known[key])
            text = cap.stage(req.from_stage).text
            ir_path = os.path.join(tmp, f"job{i}.{req.from_stage}")
            with open(ir_path, "w", encoding="utf-8") as fh:
                fh.write(_edited_ir(text if isinstance(text, str) else text.decode("utf-8", "replace"), req, cap))
                # Triton hashes the IR text, not the stage hook: without this line, two
                # replays differing only in a pass left out would share a hash, and the
                # capture would keep one of them as a repeat of the other.
                fh.write(f"\n// irscope replay {i}: {req.label()}\n")
            job_specs.append(_job(req, cap, i, ir_path))
        chunks = _chunks(requests, max(1, jobs))
        argv = command or ["irscope", *sys.argv[1:]]
        runner = _Runner(requests, origs, job_specs, out_path, tmp, on_progress, argv)
        return runner.run(chunks)
    finally:
        for view in views.values():
            view.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _chunks(requests: list[ReplayRequest], jobs: int) -> list[list[int]]:
    """Request indexes per child: each child runs one Python, each Python's requests
    are dealt out evenly to at most ``jobs`` children (all run at once)."""
    by_python: dict[str | None, list[int]] = {}
    for i, req in enumerate(requests):
        by_python.setdefault(req.python, []).append(i)
    chunks: list[list[int]] = []
    for idxs in by_python.values():
        n = min(jobs, len(idxs))
        chunks += [idxs[k::n] for k in range(n)]
    return chunks


class _Runner:
    """Runs the children in threads and stores their captures from the calling thread
    (the bundle has one writer), finishing each outcome once its capture and the
    child's verdict on it are both in."""

    def __init__(self, requests: list[ReplayRequest], origs: list[_Original], job_specs: list[dict],
                 out_path: str, tmp: str, on_progress: ProgressFn | None, command: list[str]):
        self.requests, self.origs, self.job_specs = requests, origs, job_specs
        self.out_path, self.tmp, self.on_progress, self.command = out_path, tmp, on_progress, command
        self.events: "queue.Queue[tuple[str, int, Any]]" = queue.Queue()
        self.kernels: dict[int, CapturedKernel] = {}
        self.outcomes: dict[int, ReplayOutcome] = {}
        self.run_ids: list[int] = []
        self.outcomes_stored = False

    def run(self, chunks: list[list[int]]) -> list[ReplayOutcome]:
        existed = os.path.exists(self.out_path)
        bundle = StoreBundle.open(self.out_path, create=True)
        try:
            return self._run(bundle, chunks)
        finally:
            # A child that stored nothing (no stage hook, IR it cannot read) leaves no
            # empty run behind, nor a bundle of its own making.
            for run_id in self.run_ids:
                bundle.discard_run(run_id)
            bundle.close()
            if not existed and not self.outcomes_stored:
                os.remove(self.out_path)

    def _run(self, bundle: StoreBundle, chunks: list[list[int]]) -> list[ReplayOutcome]:
        specs = []
        for c, idxs in enumerate(chunks):
            spec_path = os.path.join(self.tmp, f"spec{c}.json")
            results = os.path.join(self.tmp, f"results{c}.json")
            with open(spec_path, "w") as fh:
                json.dump({"jobs": [self.job_specs[i] for i in idxs], "results": results}, fh)
            # Compile-only, always (nothing is launched); each job passes its own target to
            # triton.compile, so the child's default one is never used.
            req = CaptureRequest(REPLAY_SCRIPT, [spec_path], self.requests[idxs[0]].python, ["sm_90"])
            run_id = bundle.begin_run(run_info(req, self.command))
            self.run_ids.append(run_id)
            specs.append((idxs, req, results, run_id))
        threads = [threading.Thread(target=self._child, args=(c, req), daemon=True)
                   for c, (_idxs, req, _results, _run) in enumerate(specs)]
        for t in threads:
            t.start()
        try:
            fatal = self._collect(bundle, specs)
        except KeyboardInterrupt:
            # Ctrl-C: every replay stored so far is kept; the children, in process groups
            # of their own, end with this process (their bootstrap watches it).
            for _idxs, _req, _results, run_id in specs:
                bundle.finish_run(run_id, complete=False, status="interrupted", mode="compile-only")
            raise
        for t in threads:
            t.join()
        for idxs, _req, _results, run_id in specs:
            ok = all(self.outcomes[i].ok for i in idxs)
            bundle.finish_run(run_id, complete=True, status="ok" if ok else "failed", mode="compile-only",
                              targets=sorted({self.job_specs[i]["target"] for i in idxs}))
        if fatal:
            raise IrscopeError(fatal)
        return [self.outcomes[i] for i in range(len(self.requests))]

    def _collect(self, bundle: StoreBundle, specs: list[tuple[list[int], CaptureRequest, str, int]]) -> str | None:
        """Store each replay as its capture and the child's verdict on it come in,
        until every child has ended; the one line of a child that could not run at
        all (no stage hook), if one could not."""
        running = set(range(len(specs)))
        fatal: str | None = None
        ends: dict[int, list[TargetOutcome]] = {}
        while running or not self.events.empty():
            try:
                kind, c, payload = self.events.get(timeout=0.1)
            except queue.Empty:
                kind, c, payload = "tick", -1, None
            if kind == "kernel":
                job = payload.options.get("irscope_replay_job")
                if isinstance(job, int) and job not in self.kernels:
                    self.kernels[job] = payload
            elif kind == "done":
                running.discard(c)
                ends[c] = payload
            for c2, (idxs, _req, results, run_id) in enumerate(specs):
                verdicts = _read_results(results)
                if verdicts.get("fatal"):
                    fatal = fatal or str(verdicts["fatal"])
                for i in idxs:
                    if i in self.outcomes:
                        continue
                    verdict = verdicts.get("jobs", {}).get(i)
                    done = c2 in ends
                    if verdict is None and not done:
                        continue
                    if verdict is not None and verdict.get("entered") and i not in self.kernels and not done:
                        continue  # its record is on its way
                    self._finish(bundle, i, run_id, verdict, verdicts.get("triton"), ends.get(c2))
        return fatal

    def _child(self, c: int, req: CaptureRequest) -> None:
        outcomes: list[TargetOutcome] = []
        try:
            outcomes = run_capture(req, lambda k: self.events.put(("kernel", c, k)))
        finally:
            self.events.put(("done", c, outcomes))

    def _finish(self, bundle: StoreBundle, i: int, run_id: int, verdict: dict | None, triton: str | None,
                ends: list[TargetOutcome] | None) -> None:
        req, orig = self.requests[i], self.origs[i]
        kernel = self.kernels.get(i)
        dropped = list((verdict or {}).get("dropped") or [])
        said, summary = (verdict or {}).get("error"), kernel.error if kernel is not None else None
        # The capture's summary where it says more than the child's line: what a failed
        # MLIR pass printed (the exception itself only says "PassManager::run failed").
        error = summary if summary and (not said or summary.startswith(said)) else (said or summary)
        if verdict is None:
            error = _child_failure(ends, req.python)
        if (verdict or {}).get("unreadable") and error:
            who = f"Triton {triton}" + (f" (--python {req.python})" if req.python else "")
            error = f"{who} cannot read this {req.from_stage} IR: {error}"
            kernel = None  # nothing compiled: no capture to keep
        cap_id = None
        if kernel is not None:
            replay_kernel = _as_replay(kernel, orig, req, dropped, version_note(triton, orig.triton))
            cap_id = bundle.add_capture(run_id, replay_kernel)
            self.outcomes_stored = True
            add_attachment(bundle, STAMP_KIND, cap_id, req.label(), _stamp(req, orig, dropped, triton))
        ok = bool(verdict and verdict.get("ok")) and kernel is not None and kernel.error is None
        outcome = ReplayOutcome(req, cap_id, ok, None if ok else _first_line(error or "the replay failed"),
                                kernel.failed_stage if kernel is not None else None,
                                kernel.failed_pass if kernel is not None else None, tuple(dropped), triton, orig.triton)
        self.outcomes[i] = outcome
        if self.on_progress is not None:
            self.on_progress(len(self.outcomes), len(self.requests), outcome)


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return (lines[0] if lines else text.strip())[:400]


def _read_results(path: str) -> dict:
    """The child's verdicts so far: ``{"triton", "fatal", "jobs": {index: verdict}}``."""
    try:
        with open(path) as fh:
            data = json.load(fh)
    except (OSError, ValueError):  # not written yet (or being replaced): nothing so far
        return {}
    data["jobs"] = {int(j["index"]): j for j in data.get("jobs", [])}
    return data


def _child_failure(ends: list[TargetOutcome] | None, python: str | None) -> str:
    """Why a child gave no verdict on a job: no Triton, a crash, an error of its own."""
    o = ends[0] if ends else None
    if o is None or not o.hook_ran:
        return f"{python or 'the interpreter'} ran no replay (is it a Python interpreter with Triton?)"
    err = o.script_error or {}
    if err.get("kind") == "no-triton" or o.exit_code == 4:
        return f"no Triton in {python or 'the interpreter'}: {err.get('type')}: {err.get('message')}"
    if o.signal is not None:
        return f"the replay's compiler process died with signal {o.signal}"
    if err:
        return f"the replay failed: {err.get('type')}: {err.get('message')}"
    return f"the replay's process exited with code {o.exit_code}"
