"""``irscope run --profile``: capture as ``irscope run`` does, then profile and attach.

The capture runs first, unchanged; then the script runs again under a profiler and each
captured kernel's samples are attached to its capture (:mod:`irscope.capture.profile_attach`).
What was attached is said on stderr, one line per profile; ``irscope hot`` reads them.
With ``--json``, stdout is ``irscope run --json``'s list of captures, printed once the
profiles are attached, each capture with its ``profile`` (:func:`run_profile_json`).
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

from rich.console import Console
from rich.text import Text

from irscope.capture.profile_attach import ProfileOutcome, profile_and_attach
from irscope.capture.profile_run import NCU, choose_profiler, gpu_present
from irscope.capture.session import CaptureRequest
from irscope.errors import IrscopeError


def chosen_profiler(wanted: str) -> str:
    """``ncu`` or ``proton`` for ``--profiler auto|ncu|proton``; a one-line error when
    ``ncu`` is asked for and not on PATH."""
    if wanted == NCU and not shutil.which("ncu"):
        raise IrscopeError("--profiler ncu: no ncu on PATH (Nsight Compute's command line)")
    return choose_profiler() if wanted == "auto" else wanted


def capture_and_profile(req: CaptureRequest, output: str, command: list[str], args) -> int:
    """Capture into ``output`` (as ``irscope run``), then profile the script and attach."""
    from irscope.cli.run_cmd import capture_into

    if req.targets:
        raise IrscopeError("--profile measures on this machine's GPU: leave out --target (a compile-only "
                           "capture has nothing to profile)")
    if args.profile_launches < 1:
        raise IrscopeError(f"--profile-launches {args.profile_launches}: must be at least 1")
    tool = chosen_profiler(args.profiler)
    if not gpu_present():
        raise IrscopeError("--profile needs an NVIDIA GPU on this machine; capture here and attach a profile "
                           "made on a GPU machine with: irscope profile import BUNDLE KERNEL FILE")
    stored: list[int] = []
    as_json = bool(args.json)
    code = capture_into(req, output, command, args, stored_ids=stored, print_json=False)
    outcome: ProfileOutcome | None = None
    try:
        if code != 0 or not stored:
            return code
        outcome = _profile(req, output, stored, args, tool)
    finally:
        # With --json the captures are printed whatever happened to the profiling (a
        # one-line error follows on stderr): they are in the bundle either way.
        if as_json:
            print(json.dumps(run_profile_json(output, stored, outcome) if stored else [], indent=2))
    return 0


def _profile(req: CaptureRequest, output: str, stored: list[int], args, tool: str) -> ProfileOutcome:
    """Profile the captured GPU kernels of ``stored`` and attach; say what on stderr."""
    import irscope

    with irscope.open(output) as view:
        caps = [c for c in view.captures() if c.id in set(stored)]
    gpu_caps = [c.id for c in caps if c.info.get("mode") == "gpu" and not c.error]
    if not gpu_caps:
        raise IrscopeError(f"--profile: the script compiled its kernels without a GPU (compile-only), so there "
                           f"is nothing to profile; the {len(caps)} capture(s) are kept in {output}")
    console = Console(stderr=True, soft_wrap=True)
    what = "Nsight Compute" if tool == NCU else "Proton's PC sampling"
    as_json = bool(args.json)
    if not (args.quiet or as_json):
        console.print(Text(f"profiling: running {os.path.basename(req.script)} again under {what}"),
                      highlight=False)
    outcome = profile_and_attach(output, gpu_caps, req.script, req.script_args, req.python, tool,
                                 args.profile_launches, args.keep_profile)
    for a in outcome.attached if not as_json else ():  # --json: each capture's `profile` says it
        console.print(Text(f"profile #{a.profile_id} on #{a.capture_id} {a.title}: "
                           f"{a.total_samples} samples, {a.launches} launch(es), {tool}"), highlight=False)
    for note in outcome.notes:
        console.print(Text.assemble(("note: ", "yellow"), note), highlight=False)
    if outcome.kept:
        console.print(Text(f"profiler's file kept: {outcome.kept}"), highlight=False)
    if not outcome.attached:
        raise IrscopeError(f"--profile: {tool} profiled no launch whose code is a captured kernel's"
                           + (f" ({outcome.notes[0]})" if outcome.notes else ""))
    return outcome


def run_profile_json(output: str, stored: list[int], outcome: ProfileOutcome | None) -> list[dict[str, Any]]:
    """``irscope run --profile --json``: the captures ``stored`` of the bundle ``output``
    as ``irscope run --json`` lists them, each with ``profile`` (what the profiled run
    attached to it: its stamp, ``label``, ``total_samples`` and ``unattributed``; None when
    nothing) and ``profile_note`` (why a capture got nothing, when the profiler said;
    else None). ``outcome`` None: the profiling did not happen or failed."""
    import irscope
    from irscope.core.profile import profile_of

    attached = {a.capture_id: a for a in outcome.attached} if outcome is not None else {}
    refused = dict(outcome.refused) if outcome is not None else {}
    rows: list[dict[str, Any]] = []
    with irscope.open(output) as view:
        for cap in (c for c in view.captures() if c.id in set(stored)):
            row = cap.to_json()
            a = attached.get(cap.id)
            hot = profile_of(cap, a.profile_id) if a is not None else None
            row["profile"] = None if hot is None else {
                **hot.stamp.to_json(), "label": hot.stamp.label(), "unattributed": hot.unattributed}
            row["profile_note"] = refused.get(cap.id)
            rows.append(row)
    return rows

