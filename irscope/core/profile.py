"""Measured hot spots: a GPU profile attached to a capture, charged to the user's lines
and laid over every stage's ops.

A bundle keeps any number of profiles per capture (attachments of kind
:data:`PROFILE_KIND`, each a :class:`irscope.profiles.model.KernelProfile`), each
stamped with its tool, version, GPU, date and launch count (:class:`ProfileStamp`).
:func:`profile_of` charges one to the capture by the rules of
:mod:`irscope.core.profile_charge` and returns a :class:`HotProfile`: the user's lines
by samples with their stall reasons, and per stage (SASS, PTX, LLIR, TTGIR, TTIR) the ops'
shares. Conservation holds: ``sum(line.samples) + unattributed == total_samples``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from irscope.compiler.stages import LLIR, PTX, SASS, TTGIR, TTIR
from irscope.core.profile_charge import (OWN, Bucket, CallMaps, Charge, Charged, Files, SassSite, StageOp, base_name,
                                         call_maps, charge_ncu, charge_proton, charge_sites, is_library_file,
                                         site_key, spread_to_ops, user_frames)
from irscope.errors import IrscopeError
from irscope.ir.python_lines import same_file
from irscope.profiles.model import KernelProfile
from irscope.store.attachments import add_attachment, attachments
from irscope.store.bundle import Bundle as StoreBundle

if TYPE_CHECKING:
    from irscope.core.capture import Capture

PROFILE_KIND = "profile"
"""The attachment kind a profile is stored under."""
HOT_STAGES: tuple[str, ...] = (SASS, PTX, LLIR, TTGIR, TTIR)
"""The stages whose ops a profile is laid over, lowest first (every stage of an NVIDIA
capture)."""
# The stages whose location chains name a library line's call sites.
_CHAIN_STAGES = (LLIR, TTGIR)


@dataclass(frozen=True)
class ProfileStamp:
    """What a stored profile is: the attachment's id and the profile's stamp."""

    id: int
    """The attachment id (``irscope profile ls`` lists it; ``--profile ID`` picks it)."""
    tool: str
    """``ncu`` or ``proton``."""
    tool_version: str | None
    gpu: str | None
    date: str | None
    launches: int
    """Profiled launches merged into it."""
    kernel: str
    source: str
    """The file imported (base name) or ``irscope run --profile``."""
    created: str
    """When it was attached."""
    notes: tuple[str, ...] = ()
    total_samples: int = 0

    def label(self) -> str:
        """One line: ``#3 ncu 2025.3.1 on NVIDIA H200, 2026-12-03, 1 launch, 79 samples``."""
        parts = [f"#{self.id} {self.tool}" + (f" {self.tool_version}" if self.tool_version else ""),
                 f"on {self.gpu}" if self.gpu else "GPU unknown", self.date or "date unknown",
                 f"{self.launches} launch{'es' if self.launches != 1 else ''}",
                 f"{self.total_samples} samples", f"from {self.source}"]
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "tool": self.tool, "tool_version": self.tool_version, "gpu": self.gpu,
                "date": self.date, "launches": self.launches, "kernel": self.kernel, "source": self.source,
                "created": self.created, "notes": list(self.notes), "total_samples": self.total_samples}


@dataclass(frozen=True)
class LineHeat:
    """A user line's measured samples."""

    file: str
    """As the capture names it (the path given to ``irscope run``)."""
    line: int
    samples: int
    stalls: dict[str, int]
    """Stall reason -> samples, most first (names: :mod:`irscope.profiles.model`)."""
    how: str
    """The weakest way its samples got here: ``own``, ``call-site``, ``nearest``, ``estimated``."""

    def dominant(self, n: int = 2) -> tuple[tuple[str, int], ...]:
        """The ``n`` stall reasons with most samples."""
        return tuple(list(self.stalls.items())[:n])

    def to_json(self, total: int) -> dict[str, Any]:
        return {"line": self.line, "file": self.file, "samples": self.samples, "stalls": dict(self.stalls),
                "how": self.how, "share": round(self.samples / total, 4) if total else 0.0}


@dataclass(frozen=True)
class OpHeat:
    """An op of a stage and the samples laid on it (shared ones are fractions)."""

    stage: str
    stage_line: int
    """Its line in the stage text (what every stage view numbers)."""
    text: str
    samples: float

    def to_json(self, total: int) -> dict[str, Any]:
        return {"stage": self.stage, "stage_line": self.stage_line, "text": self.text, "samples": self.samples,
                "share": round(self.samples / total, 4) if total else 0.0}


@dataclass(frozen=True)
class HotProfile:
    """One profile charged to one capture."""

    stamp: ProfileStamp
    total_samples: int
    """The profile's own total."""
    unattributed: int
    """Samples no line could take (no line info, or an offset the capture lacks)."""
    lines: tuple[LineHeat, ...]
    """Most samples first."""
    call_sites: bool = False
    """Whether helper lines were moved to the kernel lines that call them."""
    layer: "StageLayer | None" = field(default=None, repr=False, compare=False)
    """Lays the samples over a stage's ops (:meth:`ops`), once per stage."""
    _laid: dict[str, tuple[tuple[OpHeat, ...], float]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def stages(self) -> tuple[str, ...]:
        """The stages whose ops the samples can be laid over, in :data:`HOT_STAGES` order."""
        return self.layer.stages if self.layer is not None else ()

    def _stage(self, stage: str) -> tuple[tuple[OpHeat, ...], float]:
        got = self._laid.get(stage)
        if got is None:
            if self.layer is None or stage not in self.layer.stages:
                raise IrscopeError(f"no heat for stage {stage!r} (stages: {', '.join(self.stages) or 'none'})")
            # A view may ask from two threads: both compute the same value, one is kept.
            got = self._laid.setdefault(stage, self.layer.lay(stage))
        return got

    def ops(self, stage: str) -> tuple[OpHeat, ...]:
        """The ops of ``stage`` with samples, most first (laid over on first demand).
        IrscopeError for a stage the capture lacks."""
        return self._stage(stage)[0]

    def unplaced(self, stage: str) -> float:
        """Samples that no op of ``stage`` took (no op of it at their line)."""
        return self._stage(stage)[1]

    def stage_heat(self, stage: str) -> dict[int, float]:
        """Stage line -> samples (a view's heat column)."""
        return {o.stage_line: o.samples for o in self.ops(stage)}

    def line(self, line: int, file: str | None = None) -> LineHeat | None:
        """The heat of one user line (of ``file``, matched by path suffix; any file when
        None), or None when it has no samples."""
        for h in self.lines:
            if h.line == line and (file is None or same_file(h.file, file)):
                return h
        return None

    def line_samples(self, file: str | None = None) -> dict[int, int]:
        """Line -> samples, of ``file`` (by path suffix) or of every file."""
        out: dict[int, int] = {}
        for h in self.lines:
            if file is None or same_file(h.file, file):
                out[h.line] = out.get(h.line, 0) + h.samples
        return out

    def to_json(self, stage: str = SASS, top: int | None = None) -> dict[str, Any]:
        """The ``irscope hot --json`` object: ``total_samples``, ``unattributed``,
        ``lines`` and the ``ops`` of ``stage`` (``top`` of each when given)."""
        t = self.total_samples
        lines = self.lines if top is None else self.lines[:top]
        ops = self.ops(stage)
        ops = ops if top is None else ops[:top]
        return {"profile": self.stamp.to_json(), "total_samples": t, "unattributed": self.unattributed,
                "call_sites": self.call_sites, "stage": stage, "unplaced": self.unplaced(stage),
                "lines": [h.to_json(t) for h in lines], "ops": [o.to_json(t) for o in ops]}


# -- stored profiles -------------------------------------------------------------------

def _stamp(row_id: int, created: str, p: KernelProfile) -> ProfileStamp:
    return ProfileStamp(row_id, p.tool, p.tool_version, p.gpu, p.date, p.launches, p.kernel, p.source,
                        created, p.notes, p.total_samples)


def _rows(cap: "Capture") -> list[tuple[ProfileStamp, KernelProfile]]:
    out = []
    for row in attachments(cap._store(), PROFILE_KIND, cap.id):
        p = KernelProfile.from_json(row.data)
        out.append((_stamp(row.id, row.created, p), p))
    return out


def profiles_of(cap: "Capture") -> tuple[ProfileStamp, ...]:
    """The stamps of the profiles attached to ``cap``, oldest first."""
    return tuple(s for s, _ in _rows(cap))


def attach_profile(bundle_path: str, capture_id: int, profile: KernelProfile) -> int:
    """Store ``profile`` on capture ``capture_id`` of the bundle at ``bundle_path``
    (one transaction); the new profile's id."""
    store = StoreBundle.open(bundle_path, create=True)
    try:
        if not any(r.id == capture_id for r in store.captures()):
            raise IrscopeError(f"no capture #{capture_id} in {bundle_path}")
        return add_attachment(store, PROFILE_KIND, capture_id, profile.stamp(), profile.to_json())
    finally:
        store.close()


# -- reading a capture into the charging records ---------------------------------------

def sass_sites(cap: "Capture") -> tuple[SassSite, ...]:
    """The capture's SASS instructions in offset order, each with its innermost frame."""
    if SASS not in cap.stages:
        raise IrscopeError(f"{cap.title()} has no SASS: a profile needs a capture for an NVIDIA target")
    module = cap.stage(SASS).module
    # A profile's offsets are those of the kernel's section: its code, then any noinline
    # helper's (nvdisasm prints them in the kernel's section, offsets running on).
    fn = next((f for f in module.functions if f.name == cap.kernel), None)
    sites = []
    for op in (fn.ops() if fn is not None else module.ops()):
        off = getattr(op, "offset", None)
        if off is None:
            continue
        sites.append(SassSite(int(off), op.line, op.text.strip(), op.location.frame))
    sites.sort(key=lambda s: s.offset)
    return tuple(sites)


def _files(cap: "Capture", sites: tuple[SassSite, ...]) -> Files:
    names = {s.frame.file for s in sites if s.frame is not None and s.frame.line and not is_library_file(s.frame.file)}
    return Files((n for n in names if n), cap.file)


def _stage_ops(cap: "Capture", stage: str, files: Files) -> tuple[StageOp, ...]:
    out = []
    for op in cap.iter_ops(stage):
        f = op.location.frame
        users = user_frames(op.location)
        out.append(StageOp(op.line, op.text.strip(), (base_name(f.file), f.line) if f is not None and f.line else None,
                           (files.canon(users[0].file), users[0].line) if users else None))
    return tuple(out)


def _sass_ops(sites: tuple[SassSite, ...], charges: tuple) -> tuple[StageOp, ...]:
    return tuple(StageOp(s.stage_line, s.text, site_key(s), (c.file, c.line) if c is not None else None)
                 for s, c in zip(sites, charges))


def _parsed(cap: "Capture", stage: str) -> bool:
    if stage not in cap.stages:
        return False
    st = cap.stage(stage)
    return not st.binary


class StageLayer:
    """Lays one charged profile over a stage's ops, on first demand per stage (a view
    that shows one stage parses no other)."""

    def __init__(self, cap: "Capture", profile: KernelProfile, sites: tuple[SassSite, ...],
                 own: tuple[Charge | None, ...], buckets: tuple[Bucket, ...], files: Files):
        self._cap, self._profile, self._sites, self._own = cap, profile, sites, own
        self._buckets, self._files = buckets, files
        self.stages = tuple(s for s in HOT_STAGES if s == SASS or _parsed(cap, s))

    def lay(self, stage: str) -> tuple[tuple[OpHeat, ...], float]:
        """(the ops of ``stage`` with samples, most first; samples on none of its ops)."""
        if stage == SASS:
            by_offset = {s.offset: i for i, s in enumerate(self._sites)} if self._profile.tool == "ncu" else None
            shares, unplaced = spread_to_ops(self._buckets, _sass_ops(self._sites, self._own), by_offset)
        else:
            shares, unplaced = spread_to_ops(self._buckets, _stage_ops(self._cap, stage, self._files))
        return tuple(OpHeat(stage, o.stage_line, o.text, o.samples) for o in shares), unplaced


@dataclass(frozen=True)
class _Static:
    """What charging reads from a capture, whatever the profile (built once per capture)."""

    sites: tuple[SassSite, ...]
    files: Files
    maps: CallMaps
    own: tuple[Charge | None, ...]
    moved: tuple[Charge | None, ...]


def _static(cap: "Capture") -> _Static:
    def build() -> _Static:
        sites = sass_sites(cap)
        files = _files(cap, sites)
        locations = [op.location for st in _CHAIN_STAGES if _parsed(cap, st) for op in cap.iter_ops(st)]
        maps = call_maps(locations, files)
        return _Static(sites, files, maps, charge_sites(sites, maps, files, call_sites=False),
                       charge_sites(sites, maps, files, call_sites=True))
    return cap._memo("profile_static", build)


def site_charges(cap: "Capture", call_sites: bool = False) -> tuple[tuple[SassSite, Charge | None], ...]:
    """Each SASS instruction of ``cap`` (offset order) with the user line its samples
    are charged to (None: unattributed), by the rules of :mod:`irscope.core.profile_charge`;
    a fact of the capture alone, whatever the profile."""
    st = _static(cap)
    return tuple(zip(st.sites, st.moved if call_sites else st.own))


def charge(cap: "Capture", profile: KernelProfile, call_sites: bool = False) -> tuple[Charged, StageLayer]:
    """Charge ``profile`` to ``cap``: its lines (own or ``call_sites`` mode), and the
    layer that lays it over each stage's ops."""
    st = _static(cap)
    sites, files, maps, own = st.sites, st.files, st.maps, st.own
    mode = st.moved if call_sites else own

    def run(charges: tuple[Charge | None, ...], moved: bool) -> Charged:
        if profile.tool == "ncu":
            return charge_ncu(profile, sites, charges)
        return charge_proton(profile, sites, charges, maps, files, call_sites=moved)

    charged = run(mode, call_sites)
    # Ops are laid over by their own lines: a call-site view moves lines, not ops.
    buckets = run(own, False).buckets if call_sites else charged.buckets
    return charged, StageLayer(cap, profile, sites, own, buckets, files)


def hot_profile(cap: "Capture", stamp: ProfileStamp, profile: KernelProfile, call_sites: bool = False) -> HotProfile:
    """``profile`` (stored as ``stamp``) charged to ``cap``."""
    charged, layer = charge(cap, profile, call_sites)
    lines = tuple(LineHeat(lc.file, lc.line, lc.samples, lc.stalls, lc.how) for lc in charged.lines)
    return HotProfile(stamp, charged.total, charged.unattributed, lines, call_sites, layer)


def line_texts(cap: "Capture") -> dict[tuple[str, int], str]:
    """(file, line) -> source text of the kernel's lines and of its stored helpers' (how
    views print a hot line beside its numbers; keys as the capture names the files)."""
    out: dict[tuple[str, int], str] = {}
    for name, file, first, text in cap._store().helper_sources(cap.id):
        for i, t in enumerate(text.splitlines()):
            out[(file, first + i)] = t
    src = cap.source
    if src.file and src.text and src.first_line:
        for i, t in enumerate(src.text.splitlines()):
            out[(src.file, src.first_line + i)] = t
    return out


def profile_of(cap: "Capture", which: int | None = None, call_sites: bool = False) -> HotProfile | None:
    """The profile ``which`` (an id of :func:`profiles_of`; the newest when None) of
    ``cap``, charged to it; None when it has none. IrscopeError (one line) for an id
    that is not one of its profiles."""
    rows = _rows(cap)
    if not rows:
        return None
    if which is None:
        stamp, prof = rows[-1]
    else:
        got = [r for r in rows if r[0].id == which]
        if not got:
            ids = ", ".join(str(s.id) for s, _ in rows)
            raise IrscopeError(f"{cap.title()} has no profile {which} (its profiles: {ids})")
        stamp, prof = got[0]
    key = ("profile", stamp.id, stamp.created, call_sites)
    return cap._memo(key, lambda: hot_profile(cap, stamp, prof, call_sites))


__all__ = ["PROFILE_KIND", "HOT_STAGES", "ProfileStamp", "LineHeat", "OpHeat", "HotProfile", "OWN", "StageLayer",
           "profiles_of", "profile_of", "attach_profile", "charge", "hot_profile", "line_texts", "sass_sites",
           "site_charges"]
