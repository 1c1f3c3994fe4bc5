"""Importing a GPU profile into a bundle: which capture each launch belongs to.

A profile is charged through instruction offsets, so an Nsight Compute launch is
attached only to a capture whose SASS it is, instruction by instruction
(:mod:`irscope.profiles.sass_match`). Launches of the kernel that match the same
capture are merged into one profile; launches of other kernels are ignored. When
no launch matches, nothing is attached and the error says where the SASS first
differs. Named without a variant, a kernel's every variant on the target is a
candidate (so one export of several autotune configs lands on each config); named
by ``#id`` or ``--variant``, only that capture is.

A Proton profile has no PCs to check: it merges every launch and variant of the
kernel's name, and goes to the capture named (the kernel's first by default).

Planning (:func:`plan_import`) only reads the bundle; :func:`import_planned` writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from irscope.compiler.stages import SASS
from irscope.core.profile import attach_profile
from irscope.core.target import target_key
from irscope.errors import IrscopeError
from irscope.profiles.model import KernelProfile, SampledLine
from irscope.profiles.ncu_source import NcuBlock, looks_like_ncu_source, merge_blocks, parse_ncu_source
from irscope.profiles.proton_hatchet import kernel_profile, looks_like_hatchet, parse_proton_hatchet
from irscope.profiles.sass_match import CaptureSass, capture_sass, sass_mismatch

if TYPE_CHECKING:
    from irscope.core.bundle import Bundle
    from irscope.core.capture import Capture

NCU_CSV = "ncu-csv"
NCU_REP = "ncu-rep"
HATCHET = "hatchet"
#: The first bytes of a ``.ncu-rep`` report.
NCU_REP_MAGIC = b"NVR\x00"
ACCEPTED = "an Nsight Compute source export (.csv), a .ncu-rep or a Proton .hatchet"


@dataclass(frozen=True)
class Stamps:
    """What the profile file may not say, given by the user (or found elsewhere)."""

    gpu: str | None = None
    tool_version: str | None = None
    date: str | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlannedImport:
    """One profile to attach to one capture."""

    capture_id: int
    title: str
    profile: KernelProfile


def file_kind(name: str, head: bytes) -> str | None:
    """What a profile file is, by its first bytes (then its extension): NCU_CSV,
    NCU_REP, HATCHET, or None when it is none of them."""
    if head.startswith(NCU_REP_MAGIC):
        return NCU_REP
    text = head.decode("utf-8", errors="replace")
    if looks_like_hatchet(text):
        return HATCHET
    if looks_like_ncu_source(text):
        return NCU_CSV
    if name.endswith(".ncu-rep"):
        return NCU_REP
    return None


def candidates(bundle: "Bundle", kernel: str, target: str | None, variant: str | None) -> list["Capture"]:
    """The captures a profile of ``kernel`` may belong to, the one ``kernel``/``target``/
    ``variant`` names first (:class:`IrscopeError` when they name none)."""
    chosen = bundle.capture(kernel, target, variant)
    if variant is not None or kernel.lstrip("#").isdigit():
        return [chosen]
    key = target_key(chosen.target)
    others = [c for c in bundle.captures(chosen.kernel)
              if c.id != chosen.id and SASS in c.stages and (target is None or target_key(c.target) == key)]
    return [chosen, *others]


def plan_import(bundle: "Bundle", kernel: str, target: str | None, variant: str | None, *,
                kind: str, text: str, source: str, stamps: Stamps) -> list[PlannedImport]:
    """The profiles that importing ``text`` (a file of ``kind``, named ``source``)
    would attach; :class:`IrscopeError` (one line) when none can be."""
    caps = candidates(bundle, kernel, target, variant)
    if kind == HATCHET:
        return [_plan_proton(caps[0], bundle.captures(caps[0].kernel), text, source, stamps)]
    if kind == NCU_CSV:
        return _plan_ncu(caps, text, source, stamps)
    raise IrscopeError(f"{source}: not a profile ({ACCEPTED})")


def _plan_proton(cap: "Capture", same_name: list["Capture"], text: str, source: str,
                 stamps: Stamps) -> PlannedImport:
    tree = parse_proton_hatchet(text, source)
    pk = tree.kernels.get(cap.kernel)
    if pk is None:
        names = sorted(k for k, v in tree.kernels.items() if v.lines)
        raise IrscopeError(f"{source}: no samples of kernel {cap.kernel!r} in it (kernels with line info: "
                           f"{', '.join(names) or 'none'})")
    notes = stamps.notes + _proton_line_check(pk.lines, same_name, source)
    profile = kernel_profile(pk, source=source, tool_version=stamps.tool_version, gpu=stamps.gpu or tree.device,
                             date=stamps.date, notes=notes)
    return PlannedImport(cap.id, cap.title(), profile)


def _proton_line_check(lines: tuple[SampledLine, ...], same_name: list["Capture"], source: str) -> tuple[str, ...]:
    """Proton has no PCs to check, but its lines come from the same line table as the
    SASS's ``//##`` markers: every sampled (file, line) should be one the SASS of some
    capture of the kernel names. None of them: another script's profile (refused).
    Some: a changed script or a variant not captured (a note)."""
    sites: set[tuple[str, int]] = set()
    for c in same_name:
        if SASS in c.stages:
            for op in c.stage(SASS).module.all_ops:
                fr = op.location.frame
                if fr is not None and fr.line:
                    sites.add((_base(fr.file), fr.line))
    if not sites or not lines:
        return ()
    stray = [ln for ln in lines if (_base(ln.file), ln.line) not in sites]
    if not stray:
        return ()
    first = f"{_base(stray[0].file)}:{stray[0].line}"
    if len(stray) == len(lines):
        raise IrscopeError(f"{source}: none of the {len(lines)} lines Proton sampled for {same_name[0].kernel} "
                           f"(e.g. {first}) is a line of its captured SASS (a profile of another version of the "
                           "script?); nothing attached")
    samples = sum(ln.samples for ln in stray)
    return (f"{samples} samples on {len(stray)} line(s) no captured SASS of {same_name[0].kernel} has (e.g. "
            f"{first}): the script changed since the capture, or they ran a variant not captured",)


def _base(path: str) -> str:
    """A file's base name: the profiler names files by the GPU machine's paths."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _plan_ncu(caps: list["Capture"], text: str, source: str, stamps: Stamps) -> list[PlannedImport]:
    chosen = caps[0]
    kernel = chosen.kernel
    mine = list(parse_ncu_source(text, source, kernel))
    if not mine:
        blocks = parse_ncu_source(text, source)
        names = list(dict.fromkeys(b.kernel for b in blocks))
        shown = ", ".join(n if len(n) <= 60 else n[:57] + "..." for n in names[:6])
        raise IrscopeError(f"{source}: no launch of {kernel!r} in it ({len(blocks)} launch(es) of: {shown}"
                           f"{', ...' if len(names) > 6 else ''})")
    sass_caps = [c for c in caps if SASS in c.stages]
    if chosen not in sass_caps:
        raise IrscopeError(f"{chosen.title()} has no SASS: an Nsight Compute profile needs a capture for an "
                           "NVIDIA target (irscope run --target sm_90 ...)")
    code: dict[int, CaptureSass] = {c.id: capture_sass(c.stage(SASS).module, c.kernel) for c in sass_caps}
    matched: dict[int, list[NcuBlock]] = {}
    first_mismatch: str | None = None
    for block in mine:
        for cap in sass_caps:
            why = sass_mismatch(kernel, block.instructions, code[cap.id], block.base_address)
            if why is None:
                matched.setdefault(cap.id, []).append(block)
                break
            if cap is chosen and first_mismatch is None:
                first_mismatch = why
    if not matched:
        where = (f"the profile's SASS is not that of capture #{chosen.id} ({chosen.title()})" if len(sass_caps) == 1
                 else f"no launch's SASS is that of any of the {len(sass_caps)} captures of {kernel}; "
                      f"against capture #{chosen.id}")
        raise IrscopeError(f"{source}: {where}: {first_mismatch}; nothing attached")
    out = []
    for cap in sass_caps:
        got = matched.get(cap.id)
        if not got:
            continue
        left = len(mine) - len(got)
        notes = stamps.notes + ((f"{left} other launch(es) of {kernel} in {source} ran other code "
                                 "(another variant): not merged here",) if left else ())
        profile = merge_blocks(kernel, got, source=source, tool_version=stamps.tool_version, gpu=stamps.gpu,
                               date=stamps.date, notes=notes)
        out.append(PlannedImport(cap.id, cap.title(), profile))
    return out


def import_planned(bundle_path: str, planned: list[PlannedImport]) -> list[int]:
    """Attach each planned profile; their new ids, in order."""
    return [attach_profile(bundle_path, p.capture_id, p.profile) for p in planned]
