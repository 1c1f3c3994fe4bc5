"""Charging a GPU profile's samples to the user's lines and to each stage's ops: pure
functions over plain records (the capture's SASS sites and location chains, the
profile's instructions or lines). :mod:`irscope.core.profile` reads a capture into
these records and wraps the result.

The rules (``docs/profiles.md`` says them for users):

- A SASS instruction carries only its innermost source line (Triton's PTX has no
  inlining info, so neither has the cubin's line table). Each instruction is charged
  to ONE user line (:func:`charge_sites`):

  1. innermost line in a user file -> that line (:data:`OWN`), as Nsight Compute does;
  2. innermost line in Triton's library (``tl.sum``, ``tl.max``...) -> the user call
     sites of that library line, read from the LLIR/TTGIR location chains: one call
     site -> it (:data:`CALL_SITE`); several -> the one of the nearest instruction
     (fewest instructions away, the one before on a tie) already charged to one of
     them by rule 1 or a single call site (:data:`NEAREST`); none -> the line of the
     nearest charged instruction (:data:`NEAREST`);
  3. no line -> unattributed.

  With ``call_sites``, a line of a user ``@triton.jit`` helper moves on to the kernel
  line that calls it, by the same resolution.
- Nsight Compute samples are per instruction: each goes where its instruction is
  charged. Proton samples are per innermost line: a user line keeps them, a library
  line is split over the lines its capture's instructions are charged to, in
  proportion to their counts (integers, largest remainder: :data:`ESTIMATED`).
- A stage's ops (:func:`spread_to_ops`): SASS, each instruction's own samples; other
  stages, an instruction's samples are shared equally by the stage's ops at the same
  innermost (file base name, line) and the same user line, else by the stage's ops of
  the same user line, else they are the stage's ``unplaced``.

Every sample lands on a line or in ``unattributed``: the sum of both is the profile's
total (conservation, checked by the tests on every fixture).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Iterable, Sequence

from irscope.ir.model import Frame, Location
from irscope.ir.python_lines import same_file
from irscope.profiles.model import KernelProfile

OWN = "own"
"""The instruction's own innermost line is the user's."""
CALL_SITE = "call-site"
"""Library (or, with call sites, helper) code called from exactly one user line."""
NEAREST = "nearest"
"""Several call sites: the one of the nearest instruction charged to one of them."""
ESTIMATED = "estimated"
"""A per-line profile's library line, split in proportion to the capture's instructions."""
HOW_ORDER: tuple[str, ...] = (OWN, CALL_SITE, NEAREST, ESTIMATED)
"""Strongest first: a line's ``how`` is the weakest of its samples'."""

# Triton installs hold more than triton/language (runtime, compiler): none of it is the
# user's, and a profile names them by another machine's path.
_PACKAGE_DIRS = ("/site-packages/triton/", "/dist-packages/triton/", "/triton/language/")

UserLine = tuple[str, int]
"""(file as the capture names it, line)."""
LibLine = tuple[str, int]
"""(file base name, line) of a library frame."""


@functools.lru_cache(maxsize=1024)  # a capture names a handful of files, asked about per op
def is_library_file(path: str) -> bool:
    """Whether ``path`` lies in Triton's package (its language library included)."""
    p = path.replace("\\", "/")
    return any(d in p for d in _PACKAGE_DIRS)


def base_name(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def weakest(a: str, b: str) -> str:
    """The weaker of two ``how`` values."""
    return a if HOW_ORDER.index(a) >= HOW_ORDER.index(b) else b


@dataclass(frozen=True)
class SassSite:
    """One instruction of the capture's SASS."""

    offset: int
    """Bytes from the function entry (``/*0540*/``)."""
    stage_line: int
    """Its line in the ``sass`` stage text."""
    text: str
    frame: Frame | None
    """Its innermost source position (the ``//## File`` marker above it); None before any."""


@dataclass(frozen=True)
class Charge:
    """Where one instruction's samples go."""

    file: str
    line: int
    how: str


@dataclass(frozen=True)
class StageOp:
    """One op of a stage, with the keys :func:`spread_to_ops` matches on."""

    stage_line: int
    text: str
    inner: LibLine | None
    """(file base name, line) of its innermost frame."""
    user: UserLine | None
    """Its innermost user frame (canonical file)."""


@dataclass(frozen=True)
class Bucket:
    """Samples that share an instruction (ncu) or an innermost line (Proton)."""

    samples: int
    inner: LibLine | None
    user: UserLine | None
    """The line they are charged to (own mode), None when unattributed."""
    offset: int | None = None
    """ncu: the instruction's offset."""


@dataclass(frozen=True)
class LineCharge:
    """A user line's charged samples."""

    file: str
    line: int
    samples: int
    stalls: dict[str, int]
    how: str


@dataclass(frozen=True)
class Charged:
    """A profile charged to a capture: lines (most samples first), the rest, and the
    buckets the stage ops share."""

    total: int
    unattributed: int
    lines: tuple[LineCharge, ...]
    buckets: tuple[Bucket, ...]


class Files:
    """Names files the capture's way: a profile or chain path that names a user file of
    the capture (by path suffix) becomes the capture's spelling."""

    def __init__(self, user_files: Iterable[str], preferred: str | None = None):
        # The kernel's file as the capture names it comes first: a chain or marker that
        # spells it another way (absolute, relative) takes the capture's spelling.
        self.known = ([preferred] if preferred else []) + sorted(set(user_files) - {preferred}, key=len, reverse=True)
        self._memo: dict[str, str] = {}

    def canon(self, path: str) -> str:
        got = self._memo.get(path)
        if got is None:
            got = next((k for k in self.known if same_file(path, k)), path)
            self._memo[path] = got
        return got


def user_frames(location: Location) -> list[Frame]:
    """The frames of a chain in user files (with a line), innermost first."""
    return [f for f in location.frames if f.line and not is_library_file(f.file)]


@dataclass(frozen=True)
class CallMaps:
    """Call sites read from location chains."""

    library: dict[LibLine, frozenset[UserLine]]
    """Library line -> the innermost user lines whose code inlines it."""
    helper: dict[UserLine, frozenset[UserLine]]
    """Helper line -> the outermost user lines (the kernel's calls) that reach it."""


def call_maps(locations: Iterable[Location], files: Files) -> CallMaps:
    """The call-site maps of every chain in ``locations`` (LLIR and TTGIR ops')."""
    lib: dict[LibLine, set[UserLine]] = {}
    helper: dict[UserLine, set[UserLine]] = {}
    for loc in locations:
        frames = loc.frames
        if not frames:
            continue
        users = user_frames(loc)
        if not users:
            continue
        inner_user = (files.canon(users[0].file), users[0].line)
        for f in frames:
            if not is_library_file(f.file):
                break
            if f.line:
                lib.setdefault((base_name(f.file), f.line), set()).add(inner_user)
        outer = users[-1]
        outer_key = (files.canon(outer.file), outer.line)
        for f in users[:-1]:
            key = (files.canon(f.file), f.line)
            if key != outer_key:
                helper.setdefault(key, set()).add(outer_key)
    return CallMaps({k: frozenset(v) for k, v in lib.items()}, {k: frozenset(v) for k, v in helper.items()})


def _nearest(own: Sequence[UserLine | None], i: int, wanted: frozenset[UserLine] | None) -> UserLine | None:
    """The user line of the own-charged site nearest to ``i`` (fewest instructions away;
    the one before on a tie) whose line is in ``wanted`` (any, when None)."""
    back = fwd = None
    for j in range(i - 1, -1, -1):
        u = own[j]
        if u is not None and (wanted is None or u in wanted):
            back = j
            break
    for j in range(i + 1, len(own)):
        u = own[j]
        if u is not None and (wanted is None or u in wanted):
            fwd = j
            break
    if back is not None and (fwd is None or i - back <= fwd - i):
        return own[back]
    return own[fwd] if fwd is not None else None


def site_key(site: SassSite) -> LibLine | None:
    """(file base name, line) of a site's innermost frame; None without line info."""
    f = site.frame
    return (base_name(f.file), f.line) if f is not None and f.line else None


def charge_sites(sites: Sequence[SassSite], maps: CallMaps, files: Files,
                 call_sites: bool = False) -> tuple[Charge | None, ...]:
    """The user line each SASS site is charged to (None: unattributed), by the rules of
    the module docstring; ``sites`` in offset order.

    Each step charges the sure sites first (a user line, a single call site); an
    ambiguous one then takes the line of the nearest sure site charged to one of its
    candidates, so a reduction inlined at two calls, or a helper inlined twice, follows
    the instructions around it that only one call can own."""
    out: list[Charge | None] = []
    pending: list[tuple[int, frozenset[UserLine]]] = []
    for i, s in enumerate(sites):
        f = s.frame
        key = site_key(s)
        if f is None or key is None:
            out.append(None)
        elif not is_library_file(f.file):
            out.append(Charge(files.canon(f.file), f.line, OWN))
        else:
            cands = maps.library.get(key, frozenset())
            if len(cands) == 1:
                (site,) = cands
                out.append(Charge(site[0], site[1], CALL_SITE))
            else:
                out.append(None)
                pending.append((i, cands))
    _resolve(out, pending, NEAREST)
    if call_sites:
        moved: list[Charge | None] = []
        pending = []
        for i, c in enumerate(out):
            cands = maps.helper.get((c.file, c.line), frozenset()) if c is not None else frozenset()
            if c is None or not cands:
                moved.append(c)
            elif len(cands) == 1:
                (u,) = cands
                moved.append(Charge(u[0], u[1], weakest(c.how, CALL_SITE)))
            else:
                moved.append(None)
                pending.append((i, cands))
        _resolve(moved, pending, NEAREST, weaker_than=out)
        out = moved
    return tuple(out)


def _resolve(out: list[Charge | None], pending: Sequence[tuple[int, frozenset[UserLine]]], how: str,
             weaker_than: Sequence[Charge | None] | None = None) -> None:
    """Charge each pending site of ``out`` (in place) to the line of the nearest sure
    site charged to one of its candidates; with no candidates, or none charged
    anywhere, to the nearest sure site's line (no candidates) or the first candidate."""
    sure: list[UserLine | None] = [(c.file, c.line) if c is not None else None for c in out]
    for i, cands in pending:
        got = _nearest(sure, i, cands or None)
        if got is None and cands:
            got = min(cands)  # no instruction of any call site: the first one, deterministic
        if got is None:
            continue
        before = weaker_than[i] if weaker_than is not None else None
        out[i] = Charge(got[0], got[1], weakest(before.how, how) if before is not None else how)


# -- the profile's samples ---------------------------------------------------------

class _Acc:
    """Per-line sums."""

    def __init__(self) -> None:
        self.samples: dict[UserLine, int] = {}
        self.stalls: dict[UserLine, dict[str, int]] = {}
        self.how: dict[UserLine, str] = {}

    def add(self, key: UserLine, samples: int, stalls: dict[str, int], how: str) -> None:
        if samples <= 0:
            return
        self.samples[key] = self.samples.get(key, 0) + samples
        st = self.stalls.setdefault(key, {})
        for r, n in stalls.items():
            if n:
                st[r] = st.get(r, 0) + n
        self.how[key] = weakest(self.how.get(key, OWN), how)

    def lines(self) -> tuple[LineCharge, ...]:
        rows = [LineCharge(f, ln, n, dict(sorted(self.stalls[(f, ln)].items(), key=lambda kv: -kv[1])),
                           self.how[(f, ln)]) for (f, ln), n in self.samples.items()]
        rows.sort(key=lambda r: (-r.samples, r.file, r.line))
        return tuple(rows)


def charge_ncu(profile: KernelProfile, sites: Sequence[SassSite], charges: Sequence[Charge | None]) -> Charged:
    """Charge an instruction-level profile: each instruction's samples to the line its
    capture instruction is charged to; an offset the capture lacks, or an instruction
    without line info, to ``unattributed`` (with the profile's own ``unplaced``)."""
    at = {s.offset: i for i, s in enumerate(sites)}
    acc = _Acc()
    unattributed = profile.unplaced
    buckets: list[Bucket] = []
    for ins in profile.instructions:
        i = at.get(ins.offset)
        c = charges[i] if i is not None else None
        if c is None:
            unattributed += ins.samples
            buckets.append(Bucket(ins.samples, None, None, ins.offset))
            continue
        acc.add((c.file, c.line), ins.samples, ins.stalls, c.how)
        buckets.append(Bucket(ins.samples, site_key(sites[i]) if i is not None else None, (c.file, c.line),
                              ins.offset))
    return Charged(profile.total_samples, unattributed, acc.lines(), tuple(buckets))


def split_largest_remainder(total: int, weights: dict[UserLine, int]) -> dict[UserLine, int]:
    """``total`` split over ``weights`` in proportion, integers summing to ``total``
    (largest remainder; ties to the first key in sorted order)."""
    keys = sorted(weights)
    wsum = sum(weights[k] for k in keys)
    if total <= 0 or wsum <= 0:
        return {k: 0 for k in keys}
    base = {k: total * weights[k] // wsum for k in keys}
    left = total - sum(base.values())
    order = sorted(keys, key=lambda k: (-(total * weights[k] % wsum), k))
    for k in order[:left]:
        base[k] += 1
    return base


def charge_proton(profile: KernelProfile, sites: Sequence[SassSite], charges: Sequence[Charge | None],
                  maps: CallMaps, files: Files, call_sites: bool = False) -> Charged:
    """Charge a line-level profile: a user line keeps its samples (or, with
    ``call_sites``, a helper line goes where its capture instructions are charged); a
    library line is split over the lines its capture instructions are charged to, in
    proportion to their counts (else over its call sites from the chains, equally);
    a line placed nowhere, and the kernel's line-less samples, are unattributed."""
    by_inner: dict[LibLine, dict[UserLine, int]] = {}
    for s, c in zip(sites, charges):
        key = site_key(s)
        if key is not None and c is not None:
            w = by_inner.setdefault(key, {})
            w[(c.file, c.line)] = w.get((c.file, c.line), 0) + 1
    acc = _Acc()
    unattributed = profile.unplaced
    buckets: list[Bucket] = []
    for sl in profile.lines:
        inner: LibLine = (base_name(sl.file), sl.line)
        if not sl.line:
            unattributed += sl.samples
            buckets.append(Bucket(sl.samples, None, None))
            continue
        library = is_library_file(sl.file)
        own_line = (files.canon(sl.file), sl.line)
        helper_calls = maps.helper.get(own_line) if call_sites and not library else None
        if not library and not helper_calls:
            acc.add(own_line, sl.samples, sl.stalls, OWN)
            buckets.append(Bucket(sl.samples, inner, own_line))
            continue
        weights = dict(by_inner.get(inner, {}))
        if not weights:
            cands = maps.library.get(inner, frozenset()) if library else (helper_calls or frozenset())
            weights = {c: 1 for c in cands}
        if not weights:
            unattributed += sl.samples
            buckets.append(Bucket(sl.samples, None, None))
            continue
        if len(weights) == 1:
            (dest,) = weights
            acc.add(dest, sl.samples, sl.stalls, CALL_SITE)
            buckets.append(Bucket(sl.samples, inner, dest))
            continue
        parts = split_largest_remainder(sl.samples, weights)
        stall_parts = {r: split_largest_remainder(n, weights) for r, n in sl.stalls.items()}
        for dest, n in parts.items():
            acc.add(dest, n, {r: sp[dest] for r, sp in stall_parts.items()}, ESTIMATED)
            if n:
                buckets.append(Bucket(n, inner, dest))
    return Charged(profile.total_samples, unattributed, acc.lines(), tuple(buckets))


# -- a stage's ops -----------------------------------------------------------------

@dataclass(frozen=True)
class OpShare:
    """Samples an op of a stage receives."""

    stage_line: int
    text: str
    samples: float


def spread_to_ops(buckets: Sequence[Bucket], ops: Sequence[StageOp],
                  by_offset: dict[int, int] | None = None) -> tuple[tuple[OpShare, ...], float]:
    """Share ``buckets`` out over a stage's ``ops``: ((op shares, most first), unplaced).
    ``by_offset`` (SASS: offset -> index in ``ops``) gives an instruction's samples to
    its own op; otherwise equal shares of the ops at the same innermost line and user
    line, else of the ops of the same user line, else unplaced. Shares round to 2
    decimals."""
    exact: dict[tuple[LibLine, UserLine], list[int]] = {}
    by_user: dict[UserLine, list[int]] = {}
    for i, op in enumerate(ops):
        if op.user is None:
            continue
        by_user.setdefault(op.user, []).append(i)
        if op.inner is not None:
            exact.setdefault((op.inner, op.user), []).append(i)
    got = [0.0] * len(ops)
    unplaced = 0.0
    for b in buckets:
        if not b.samples:
            continue
        if by_offset is not None and b.offset is not None and b.offset in by_offset:
            got[by_offset[b.offset]] += b.samples
            continue
        targets: list[int] = []
        if b.user is not None:
            if b.inner is not None:
                targets = exact.get((b.inner, b.user), [])
            if not targets:
                targets = by_user.get(b.user, [])
        if not targets:
            unplaced += b.samples
            continue
        share = b.samples / len(targets)
        for i in targets:
            got[i] += share
    shares = [OpShare(op.stage_line, op.text, round(n, 2)) for op, n in zip(ops, got) if n > 0]
    shares.sort(key=lambda s: (-s.samples, s.stage_line))
    return tuple(shares), round(unplaced, 2)
