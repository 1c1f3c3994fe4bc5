"""``irscope run --profile``'s second half: profile the script, attach each kernel's samples.

After the capture, the script runs again under a profiler (:mod:`irscope.capture.profile_run`).
Each captured kernel then gets what the profile holds of it:

- Nsight Compute: the export's blocks (one per profiled launch) of the kernel's name whose
  SASS is the capture's, offset by offset, merged into one profile per capture; a variant
  none of the profiled launches ran gets nothing (a note says so);
- Proton: its per-line samples of the kernel's name (Proton merges every launch and variant
  of a name), on the first capture of that name.

Each capture is planned and attached exactly as ``irscope profile import BUNDLE '#ID' FILE``
does it (:mod:`irscope.core.profile_import`), so a profile made by ``run --profile`` and
the same report imported later are the same profile.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, replace

import irscope
from irscope.capture.ncu_tool import export_report
from irscope.capture.profile_run import NCU, ProfilerRun, profile_with_ncu, profile_with_proton
from irscope.compiler.stages import SASS
from irscope.core.profile_import import HATCHET, NCU_CSV, PlannedImport, Stamps, import_planned, plan_import
from irscope.errors import IrscopeError

SOURCE = "irscope run --profile"


@dataclass(frozen=True)
class Attached:
    """One profile attached to one capture."""

    capture_id: int
    kernel: str
    title: str  # the capture as `irscope ls` names it
    profile_id: int
    launches: int
    total_samples: int


@dataclass(frozen=True)
class ProfileOutcome:
    """What ``run --profile`` attached, and what it could not (one line each)."""

    run: ProfilerRun
    attached: tuple[Attached, ...]
    notes: tuple[str, ...]
    kept: str | None  # where the profiler's own file was kept (--keep-profile)
    refused: tuple[tuple[int, str], ...] = ()
    """(capture id, its note) of each capture that no profiled launch fits (``notes`` holds the same lines)."""


def _attach(bundle_path: str, capture_ids: list[int], run: ProfilerRun, kind: str, text: str,
            one_per_name: bool) -> tuple[list[Attached], list[tuple[int, str]]]:
    """Plan and attach, capture by capture, as ``irscope profile import BUNDLE '#ID'``
    does; a capture no launch fits gets a note instead, (capture id, note). ``one_per_name``:
    only the first capture of each kernel name (Proton: one profile holds every variant)."""
    stamps = Stamps(gpu=run.gpu, tool_version=run.tool_version, date=run.date)
    planned: list[PlannedImport] = []
    notes: list[tuple[int, str]] = []
    seen: set[str] = set()
    with irscope.open(bundle_path) as view:
        caps = [c for c in view.captures() if c.id in set(capture_ids) and not c.error]
        for cap in caps:
            if one_per_name and cap.kernel in seen:
                continue
            if kind == NCU_CSV and SASS not in cap.stages:
                continue
            seen.add(cap.kernel)
            try:
                planned += plan_import(view, f"#{cap.id}", None, None, kind=kind, text=text, source=SOURCE,
                                       stamps=stamps)
            except IrscopeError as exc:  # this capture's code was not among the profiled launches
                notes.append((cap.id, f"#{cap.id} {cap.kernel} [{cap.variant}]: nothing attached ({exc})"))
    ids = import_planned(bundle_path, planned)
    attached = [Attached(p.capture_id, p.profile.kernel, p.title, pid, p.profile.launches, p.profile.total_samples)
                for pid, p in zip(ids, planned)]
    return attached, notes


def attach_ncu(bundle_path: str, capture_ids: list[int], run: ProfilerRun,
               csv_text: str) -> tuple[list[Attached], list[str]]:
    """Attach an ncu source export's launches to the captures whose SASS they ran; (attached, notes)."""
    attached, refused = _attach(bundle_path, capture_ids, run, NCU_CSV, csv_text, one_per_name=False)
    return attached, [n for _, n in refused]


def attach_proton(bundle_path: str, capture_ids: list[int], run: ProfilerRun,
                  text: str) -> tuple[list[Attached], list[str]]:
    """Attach Proton's samples of each captured kernel name to its first capture; (attached, notes)."""
    attached, refused = _attach(bundle_path, capture_ids, run, HATCHET, text, one_per_name=True)
    return attached, [n for _, n in refused]


def profile_and_attach(bundle_path: str, capture_ids: list[int], script: str, script_args: list[str],
                       python: str | None, tool: str, launches: int, keep_dir: str | None = None) -> ProfileOutcome:
    """Run the script under ``tool`` (``ncu`` or ``proton``) and attach each captured
    kernel's samples to its capture in ``bundle_path``. IrscopeError (one line) when
    the profiled run fails or profiles nothing."""
    with irscope.open(bundle_path) as view:
        kernels = sorted({c.kernel for c in view.captures() if c.id in set(capture_ids) and not c.error})
    if not kernels:
        raise IrscopeError("nothing to profile: no kernel was captured without an error")
    with tempfile.TemporaryDirectory(prefix="irscope-profile-") as tmp:
        if tool == NCU:
            run = profile_with_ncu(script, script_args, python, kernels, launches, tmp)
        else:
            run = profile_with_proton(script, script_args, python, tmp)
        kept = None
        if keep_dir:  # kept first: a report that fails to attach is still there to look at
            os.makedirs(keep_dir, exist_ok=True)
            kept = os.path.join(keep_dir, os.path.basename(run.output))
            shutil.copy(run.output, kept)
        if tool == NCU:
            export = export_report(run.output)  # as `profile import` reads a report
            run = replace(run, gpu=export.gpu or run.gpu, tool_version=export.tool_version)
            return attach_run(bundle_path, capture_ids, run, export.source_csv, kept)
        with open(run.output, encoding="utf-8") as f:
            return attach_run(bundle_path, capture_ids, run, f.read(), kept)


def attach_run(bundle_path: str, capture_ids: list[int], run: ProfilerRun, text: str,
               kept: str | None = None) -> ProfileOutcome:
    """Attach what the profiled run ``run`` made (``text``: Nsight Compute's source export
    of its report, or Proton's tree) to the captures ``capture_ids``, as
    :func:`attach_ncu` or :func:`attach_proton` does, by ``run.tool``."""
    if run.tool == NCU:
        attached, refused = _attach(bundle_path, capture_ids, run, NCU_CSV, text, one_per_name=False)
    else:
        attached, refused = _attach(bundle_path, capture_ids, run, HATCHET, text, one_per_name=True)
    return ProfileOutcome(run, tuple(attached), tuple(n for _, n in refused), kept, tuple(refused))
