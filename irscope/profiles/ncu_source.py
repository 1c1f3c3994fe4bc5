"""Nsight Compute's source page as CSV (``ncu -i R.ncu-rep --page source --csv
--print-source sass``), parsed into blocks of :class:`SampledInstruction`.

The export is a run of blocks, one per profiled launch: a ``"Kernel Name","<name>",``
line, the block's own header (columns differ between kernels, so every column is
found by name), then one row per SASS instruction in address order. A kernel
launched more than once sometimes has a launch's block printed twice back to back,
byte-identical: a block identical to the one before it is dropped (two real launches
of one variant differ in their samples). Offsets are addresses minus the block's
first address (the function entry), which are the capture's ``/*0040*/`` offsets.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from dataclasses import dataclass

from irscope.errors import IrscopeError

from .model import UNLISTED, KernelProfile, SampledInstruction

#: ncu's per-reason columns (all samples) -> the shared reason names of model.py.
STALL_COLUMNS: dict[str, str] = {
    "stall_barrier": "barrier", "stall_branch_resolving": "branch_resolving",
    "stall_dispatch": "dispatch", "stall_drain": "drain", "stall_imc": "imc_miss",
    "stall_lg": "lg_throttle", "stall_long_sb": "long_scoreboard", "stall_math": "math_pipe_throttle",
    "stall_membar": "membar", "stall_mio": "mio_throttle", "stall_misc": "misc",
    "stall_no_inst": "no_instruction", "stall_not_selected": "not_selected",
    "stall_selected": "selected", "stall_short_sb": "short_scoreboard", "stall_sleep": "sleeping",
    "stall_sleeping": "sleeping", "stall_tex": "tex_throttle", "stall_wait": "wait",
}
_ADDRESS = "Address"
_SOURCE = "Source"
# Column names of the same figures across ncu versions (the first one found is used).
_SAMPLES = ("# Samples", "Warp Stall Sampling (All Samples)", "Sampling Data (All)")
_NOT_ISSUED = ("Warp Stall Sampling (Not-issued Samples)", "Sampling Data (Not Issued)")
_EXECUTED = "Instructions Executed"


@dataclass(frozen=True)
class NcuBlock:
    """One profiled launch of one kernel: its instructions with their samples.

    ``kernel`` is the name ncu prints (a Triton kernel's plain name; "" when the
    export has no ``Kernel Name`` line); ``base_address`` the entry's device address
    (branch targets in ``text`` are absolute addresses); ``index`` the block's
    position among the kept blocks (launch order)."""

    index: int
    kernel: str
    base_address: int
    instructions: tuple[SampledInstruction, ...]

    @property
    def total_samples(self) -> int:
        """All samples of the launch (the sum of ``# Samples``)."""
        return sum(i.samples for i in self.instructions)


def looks_like_ncu_source(text: str) -> bool:
    """Whether ``text`` starts like an ncu source-page CSV export (cheap sniffing)."""
    head = text.lstrip("\ufeff")[:4096]
    return '"Kernel Name"' in head or head.startswith('"Address","Source"')


def parse_ncu_source(text: str, name: str = "export", kernel: str | None = None) -> tuple[NcuBlock, ...]:
    """Parse an ncu source-page CSV into its launch blocks (duplicates dropped).

    ``name`` names the file in errors. With ``kernel``, only that kernel's blocks
    (and blocks with no kernel name) are read, so another kernel's odd rows cannot
    stop an import; ``index`` stays the launch's position among all blocks.
    Raises :class:`IrscopeError` (one line) when the text is not such an export or
    a row it reads cannot be read."""
    text = text.lstrip("\ufeff")
    # ncu may interleave its own ==WARNING==/==PROF== lines with the CSV on stdout.
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("==")]
    raw_blocks: list[tuple[str, list[str], list[list[str]], int]] = []  # kernel, header, rows, line no
    current: tuple[str, list[str], list[list[str]], int] | None = None
    pending_kernel: str | None = None
    try:
        rows = list(csv.reader(lines))
    except csv.Error as exc:
        raise IrscopeError(f"{name}: not a CSV file ({exc})") from None
    for lineno, row in enumerate(rows, 1):
        if not row:
            continue
        if row[0] == "Kernel Name":
            pending_kernel = row[1] if len(row) > 1 else ""
            current = None
            continue
        if row[0] == _ADDRESS:  # a header opens a block
            current = (pending_kernel or "", row, [], lineno)
            raw_blocks.append(current)
            pending_kernel = None
            continue
        if current is None:
            raise IrscopeError(f"{name}: not an Nsight Compute source export (row {lineno} is neither a "
                               "'Kernel Name' line nor under an 'Address','Source' header)")
        current[2].append(row)
    if not raw_blocks:
        raise IrscopeError(f"{name}: not an Nsight Compute source export (no 'Address','Source' header; "
                           "export with: ncu -i R.ncu-rep --page source --csv --print-source sass)")
    blocks: list[NcuBlock] = []
    previous: tuple[str, list[str], list[list[str]], int] | None = None
    launch = 0
    for raw in raw_blocks:
        if previous is not None and raw[:3] == previous[:3]:
            continue  # ncu printed this launch's block twice
        previous = raw
        if not raw[2]:
            continue
        if kernel is None or raw[0] in (kernel, ""):
            blocks.append(_block(launch, raw[0], raw[1], raw[2], raw[3], name))
        launch += 1
    return tuple(blocks)


def _block(index: int, kernel: str, header: list[str], rows: list[list[str]], lineno: int,
           name: str) -> NcuBlock:
    """One block's rows -> an :class:`NcuBlock` (columns by name from its header)."""
    col = {h: i for i, h in enumerate(header)}
    samples_col = next((col[c] for c in _SAMPLES if c in col), None)
    if _SOURCE not in col or samples_col is None:
        raise IrscopeError(f"{name}: the block of {kernel or 'a kernel'} (row {lineno}) has no 'Source' or "
                           "'# Samples' column: export the source page with SASS (--print-source sass)")
    src, addr_col = col[_SOURCE], col[_ADDRESS]
    not_issued_col = next((col[c] for c in _NOT_ISSUED if c in col), None)
    executed_col = col.get(_EXECUTED)
    stall_cols = [(col[c], reason) for c, reason in STALL_COLUMNS.items() if c in col]
    out: list[SampledInstruction] = []
    base: int | None = None
    for k, row in enumerate(rows):
        where = f"{name}: row {lineno + 1 + k}"
        if len(row) < len(header):
            raise IrscopeError(f"{where}: {len(row)} fields under a {len(header)}-column header")
        try:
            address = int(row[addr_col], 16)
        except ValueError:
            raise IrscopeError(f"{where}: address {row[addr_col]!r} is not hexadecimal") from None
        if base is None:
            base = address
        samples = _count(row[samples_col], where)
        stalls: dict[str, int] = {}
        for i, reason in stall_cols:
            n = _count(row[i], where)
            if n:
                stalls[reason] = stalls.get(reason, 0) + n
        # Reasons ncu has no column for (HGMMA's warpgroup_arrive): All minus the listed ones.
        rest = samples - sum(stalls.values())
        if rest > 0:
            stalls[UNLISTED] = rest
        out.append(SampledInstruction(
            offset=address - base, text=row[src], samples=samples,
            not_issued=_count(row[not_issued_col], where) if not_issued_col is not None else 0,
            executed=_opt_count(row[executed_col], where) if executed_col is not None else None,
            stalls=stalls))
    return NcuBlock(index, kernel, base or 0, tuple(out))


def _count(field: str, where: str) -> int:
    """A count field: '-' and '' are 0; thousands separators allowed."""
    value = _opt_count(field, where)
    return 0 if value is None else value


def _opt_count(field: str, where: str) -> int | None:
    """A count field, None for '-' or ''."""
    s = field.strip().replace(",", "")
    if s in ("", "-"):
        return None
    try:
        return int(s)
    except ValueError:
        try:
            return int(float(s))
        except ValueError:
            raise IrscopeError(f"{where}: {field!r} is not a count") from None


def gpu_from_raw_page(text: str) -> str | None:
    """The GPU's name from ncu's raw page as CSV (``--page raw --csv``: a header row,
    a units row, one row per launch): the ``device__attribute_display_name`` of the
    first launch; None when the page lacks it."""
    lines = [ln for ln in text.lstrip("\ufeff").splitlines() if ln.strip() and not ln.startswith("==")]
    try:
        rows = list(csv.reader(lines))
    except csv.Error:
        return None
    if len(rows) < 3 or "device__attribute_display_name" not in rows[0]:
        return None
    i = rows[0].index("device__attribute_display_name")
    for row in rows[2:]:
        if i < len(row) and row[i].strip():
            return row[i].strip()
    return None


def ncu_version(text: str) -> str | None:
    """The version in ``ncu --version`` output (``Version 2025.3.1.0 (build ...)`` ->
    ``2025.3.1.0``); None when there is none."""
    m = re.search(r"Version\s+(\d[\w.]*)", text)
    return m.group(1) if m else None


def merge_blocks(kernel: str, blocks: Sequence[NcuBlock], *, source: str, tool_version: str | None = None,
                 gpu: str | None = None, date: str | None = None,
                 notes: tuple[str, ...] = ()) -> KernelProfile:
    """One :class:`KernelProfile` from launches of one code (blocks whose SASS matched
    the same capture): per offset, samples, stalls and executions summed."""
    if not blocks:
        raise ValueError("merge_blocks needs at least one block")
    by_offset: dict[int, list[SampledInstruction]] = {}
    for block in blocks:
        for ins in block.instructions:
            by_offset.setdefault(ins.offset, []).append(ins)
    merged = []
    for offset in sorted(by_offset):
        group = by_offset[offset]
        stalls: dict[str, int] = {}
        for ins in group:
            for k, v in ins.stalls.items():
                stalls[k] = stalls.get(k, 0) + v
        executed = [i.executed for i in group]
        merged.append(SampledInstruction(
            offset=offset, text=group[0].text, samples=sum(i.samples for i in group),
            not_issued=sum(i.not_issued for i in group),
            executed=None if any(e is None for e in executed) else sum(e for e in executed if e is not None),
            stalls=stalls))
    total = sum(i.samples for i in merged)
    return KernelProfile(tool="ncu", tool_version=tool_version, gpu=gpu, date=date, launches=len(blocks),
                         kernel=kernel, instructions=tuple(merged), lines=(), unplaced=0, total_samples=total,
                         source=source, notes=notes)
