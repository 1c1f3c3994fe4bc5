"""Importing a GPU profile into a bundle: which capture each launch belongs to.

A profile is charged through instruction offsets, so an Nsight Compute launch is
attached only to a capture whose SASS it is, instruction by instruction
(:mod:`irscope.profiles.sass_match`). Launches of the kernel that match the same
capture are merged into one profile; launches of other kernels are ignored. When
no launch matches, nothing is attached and the error says where the SASS first
differs. Named without a variant, a kernel's every variant on the target is a
candidate (so one export of several autotune configs lands on each config); named
by ``#id`` or ``--variant``, only that capture is. A launch whose SASS several
candidates share goes to each of them when their line maps are the same too (configs
differing only in what the code never reads: the figures per line cannot differ);
with other lines it is refused, naming them, until one is named. ncu's kernel names are matched exactly, else as names
that hold the kernel's (mangled, suffixed): the SASS check decides.

A Proton profile has no PCs to check: it merges every launch and variant of the
kernel's name, and goes to the capture named (the kernel's first by default).

Planning (:func:`plan_import`) only reads the bundle; :func:`import_planned` writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from irscope.compiler.stages import SASS
from irscope.core.profile import attach_profile
from irscope.core.selection import variant_index
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
    # A PowerShell redirect writes UTF-16 with a byte-order mark.
    utf16 = head.startswith((b"\xff\xfe", b"\xfe\xff"))
    text = head.decode("utf-16" if utf16 else "utf-8", errors="replace")
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
    sass_caps = [c for c in caps if SASS in c.stages]
    if chosen not in sass_caps:
        raise IrscopeError(f"{chosen.title()} has no SASS: an Nsight Compute profile needs a capture for an "
                           "NVIDIA target (irscope run --target sm_90 ...)")
    mine, renamed = _launches_of(kernel, text, source)
    code: dict[int, CaptureSass] = {c.id: capture_sass(c.stage(SASS).module, c.kernel) for c in sass_caps}
    matched: dict[int, list[NcuBlock]] = {}
    twins: dict[int, list["Capture"]] = {}  # capture id -> the others that got the same launches
    first_mismatch: str | None = None
    for block in mine:
        hits: list["Capture"] = []
        for cap in sass_caps:
            why = sass_mismatch(kernel, block.instructions, code[cap.id], block.base_address)
            if why is None:
                hits.append(cap)
            elif cap is chosen and first_mismatch is None:
                first_mismatch = why
        if len(hits) > 1:
            # The same instructions: the launch is every one's only if their line maps are
            # the same too (then its samples land on the same lines whichever ran).
            if len({c.stage(SASS).text for c in hits}) > 1:
                raise IrscopeError(_ambiguous(source, kernel, block, hits))
            for cap in hits:
                twins[cap.id] = [c for c in hits if c is not cap]
        for cap in hits:
            matched.setdefault(cap.id, []).append(block)
    if not matched:
        named = f" (launches named like it: {', '.join(renamed)})" if renamed else ""
        where = (f"the profile's SASS is not that of capture #{chosen.id} ({chosen.title()})" if len(sass_caps) == 1
                 else f"no launch's SASS is that of any of the {len(sass_caps)} captures of {kernel}; "
                      f"against capture #{chosen.id}")
        mixed = ("; the export mixes CUDA source with SASS: export the SASS view alone (ncu -i R.ncu-rep --page "
                 "source --csv --print-source sass) and import that" if any(b.mixed for b in mine) else "")
        raise IrscopeError(f"{source}: {where}{named}: {first_mismatch}; nothing attached{mixed}")
    taken = tuple(sorted({b.kernel for got in matched.values() for b in got if b.kernel not in (kernel, "")}))
    out = []
    for cap in sass_caps:
        got = matched.get(cap.id)
        if not got:
            continue
        left = len(mine) - len(got)
        which = ", ".join(str(b.index + 1) for b in got)
        notes = stamps.notes + ((f"launch(es) {which} of {source} (in ncu's order); {left} other launch(es) of "
                                 f"{kernel} in it ran other code (another variant): not merged here",) if left else ())
        notes += tuple(f"ncu names the kernel {_short(n)!r}: its SASS is {kernel}'s" for n in taken)
        if cap.id in twins:
            notes += (f"the same SASS, lines included, as {', '.join(f'#{c.id}' for c in twins[cap.id])}: "
                      "which of them ran cannot be told, so each has it; the figures per line are the same",)
        if not any(b.total_samples for b in got):
            notes += ("no PC samples in it: the launch ran too briefly to be sampled, or the report has no "
                      "SourceCounters section (profile with ncu --set full)",)
        profile = merge_blocks(kernel, got, source=source, tool_version=stamps.tool_version, gpu=stamps.gpu,
                               date=stamps.date, notes=notes)
        out.append(PlannedImport(cap.id, cap.title(), profile))
    return out


def _launches_of(kernel: str, text: str, source: str) -> tuple[list[NcuBlock], list[str]]:
    """The export's launches that may be ``kernel``'s, and the other names among them.

    ncu prints a Triton kernel by its plain name; launches of exactly that name are
    taken, else those whose name holds it (a mangled or suffixed name: the SASS check
    keeps only the kernel's own code). None: one line naming the kernels it holds."""
    blocks = parse_ncu_source(text, source, kernel)
    exact = [b for b in blocks if b.kernel in (kernel, "")]
    if exact:
        return exact, []
    if blocks:
        return list(blocks), list(dict.fromkeys(_short(b.kernel) for b in blocks))
    every = parse_ncu_source(text, source)
    names = list(dict.fromkeys(b.kernel for b in every))
    shown = ", ".join(_short(n) for n in names[:6])
    raise IrscopeError(f"{source}: no launch of {kernel!r} in it ({len(every)} launch(es) of: {shown}"
                       f"{', ...' if len(names) > 6 else ''})")


def _ambiguous(source: str, kernel: str, block: NcuBlock, hits: list["Capture"]) -> str:
    """The one-line refusal of a launch whose SASS is that of several captures."""
    choices = ", ".join(f"#{c.id} (--variant {variant_index(c)}: {c.variant or '-'})" for c in hits)
    return (f"{source}: launch {block.index + 1} of {kernel} runs instructions that {len(hits)} captures share, "
            f"with other lines, so which one ran cannot be told: {choices}; name one (irscope profile import "
            "BUNDLE #ID FILE, or --variant N); nothing attached")


def _short(name: str) -> str:
    """A kernel name cut for a one-line message (torch's run to hundreds of characters)."""
    return name if len(name) <= 60 else name[:57] + "..."


def import_planned(bundle_path: str, planned: list[PlannedImport]) -> list[int]:
    """Attach each planned profile; their new ids, in order."""
    return [attach_profile(bundle_path, p.capture_id, p.profile) for p in planned]
