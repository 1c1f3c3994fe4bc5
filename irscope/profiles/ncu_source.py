"""Nsight Compute's source page as CSV (``ncu -i R.ncu-rep --page source --csv
--print-source sass``), parsed into blocks of :class:`SampledInstruction`.

The export is a run of blocks, one per profiled launch: a ``"Kernel Name","<name>",``
line, the block's own header (columns differ between kernels, so every column is
found by name), then one row per SASS instruction in address order. A kernel
launched more than once sometimes has a launch's block printed twice back to back,
byte-identical: a block identical to the one before it is dropped (two real launches
of one variant differ in their samples). Offsets are addresses minus the block's
first address (the function entry), which are the capture's ``/*0040*/`` offsets.

What else a held-out export may hold is read too: ncu's ``==PROF==``/``==WARNING==``
lines and any line before the first block; columns in any order, or labelled by metric
name; a CUDA-source view (``--print-source cuda``: no addresses, skipped); the
``cuda,sass`` view ("File Path" and "Function Name" lines, a "Line No","Source",
"Address","Source" header, source-line rows without an address, a launch's
instructions printed file by file: the parts are joined and put in address order).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from dataclasses import dataclass

from irscope.errors import IrscopeError

from .model import STALL_REASONS, UNLISTED, KernelProfile, SampledInstruction

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
# The same reasons as metric names (``--print-metric-name name``): the prefix, and the
# names that differ from model.py's.
_METRIC_STALL = "smsp__pcsamp_warps_issue_stalled_"
_METRIC_REASONS = {"dispatch_stall": "dispatch", "no_instructions": "no_instruction",
                   "warpgroup_arrive": UNLISTED}
_ADDRESS_COLUMNS = ("Address", "# Address")
_SOURCE = "Source"
# Column names of the same figures across ncu versions and --print-metric-name settings
# (the first one found is used).
_SAMPLES = ("# Samples", "Warp Stall Sampling (All Samples)", "Sampling Data (All)", "smsp__pcsamp_sample_count")
_NOT_ISSUED = ("Warp Stall Sampling (Not-issued Samples)", "Sampling Data (Not Issued)")
_EXECUTED = ("Instructions Executed", "inst_executed", "smsp__inst_executed")
#: The first cell of the line that names the kernel of the block after it (``cuda,sass``
#: views name it "Function Name").
_KERNEL_LINES = ("Kernel Name", "Function Name")
#: The first cell of the line that names the source file of a CUDA-source view part.
_FILE_LINES = ("File Name", "File Path")
#: The first cell of a CUDA-source view's header (``--print-source cuda``): per source
#: line, no instruction addresses, so skipped. (A ``cuda,sass`` view's header has
#: "Line No","Source","Address","Source",...: a SASS header.)
_CUDA_VIEW = ("Line No", "# Line No")
#: The first cells of ncu's other pages, named in the error when one is given instead.
_OTHER_PAGES = {"ID": "details or raw page", "Process ID": "details or raw page"}
_EXPORT_HINT = "export with: ncu -i R.ncu-rep --page source --csv --print-source sass"


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
    mixed: bool = False  # read from an export that holds a CUDA-source view too (cuda,sass)

    @property
    def total_samples(self) -> int:
        """All samples of the launch (the sum of ``# Samples``)."""
        return sum(i.samples for i in self.instructions)


def decode_export(data: bytes) -> str | None:
    """A profile file's bytes as text: UTF-8 (a BOM allowed), or UTF-16 with its BOM
    (what a PowerShell ``>`` redirect writes); None when neither."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def looks_like_ncu_source(text: str) -> bool:
    """Whether ``text`` starts like an ncu source-page CSV export, of SASS or of CUDA
    source (cheap sniffing; the parser says what is wrong with the second)."""
    head = text.lstrip("\ufeff")[:4096]
    return any(f'"{mark}"' in head for mark in (*_KERNEL_LINES, *_FILE_LINES)) or (
        '"Source"' in head and ('"Address"' in head or '"Line No"' in head))


def is_kernel_name(name: str, kernel: str) -> bool:
    """Whether ncu's kernel name ``name`` may be ``kernel``'s: equal, or holding it
    (a mangled ``_Z10add_kernelPf...``, a demangled ``void add_kernel(float *)``, a
    ``add_kernel_0d1d2`` suffix). Only a candidate: the SASS check decides."""
    return name == kernel or (bool(kernel) and kernel in name)


def _is_sass_header(row: list[str]) -> bool:
    cells = [c.strip() for c in row]
    return _SOURCE in cells and any(c in cells for c in _ADDRESS_COLUMNS)


def _address_column(header: list[str]) -> int:
    return next(header.index(c) for c in _ADDRESS_COLUMNS if c in header)


def _is_instruction(row: list[str], address_column: int) -> bool:
    """Whether a block's row is an instruction's (its address cell holds ``0x...``),
    not a source line's (a ``cuda,sass`` view prints those without an address)."""
    return address_column < len(row) and row[address_column].strip().lower().startswith("0x")


@dataclass
class _RawBlock:
    """A block as read: the kernel's name, the header, the rows and their line numbers.
    ``after_file``: a file's line (``"File Path"``/``"File Name"``) came just before it,
    as in a ``cuda,sass`` view that prints a launch's instructions file by file."""

    kernel: str
    header: list[str]
    rows: list[list[str]]
    lineno: int
    row_linenos: list[int]
    after_file: bool

    def addresses(self) -> set[int]:
        col = _address_column(self.header)
        out = set()
        for row in self.rows:
            if _is_instruction(row, col):
                try:
                    out.add(int(row[col], 16))
                except ValueError:
                    pass  # _block says where
        return out


def parse_ncu_source(text: str, name: str = "export", kernel: str | None = None) -> tuple[NcuBlock, ...]:
    """Parse an ncu source-page CSV into its launch blocks (duplicates dropped).

    ``name`` names the file in errors. With ``kernel``, only the blocks whose name may
    be that kernel's (:func:`is_kernel_name`) and blocks with no kernel name are read,
    so another kernel's odd rows cannot stop an import; ``index`` stays the launch's
    position among all blocks. Lines ncu adds around the CSV (``==PROF==`` banners, a
    CUDA-source view, a ``cuda,sass`` view's source-line rows and its file-by-file
    parts of one launch) are skipped or joined. Raises :class:`IrscopeError` (one line)
    when the text holds no SASS view or a row it reads cannot be read."""
    text = text.lstrip("\ufeff")
    # ncu may interleave its own ==WARNING==/==PROF== lines with the CSV on stdout;
    # rows are named in errors by their line in the file, those lines counted.
    numbered = [(i, ln) for i, ln in enumerate(text.splitlines(), 1) if ln.strip() and not ln.startswith("==")]
    raw_blocks: list[_RawBlock] = []
    current: _RawBlock | None = None
    pending_kernel: str | None = None
    after_file = False
    stray: tuple[int, list[str]] | None = None  # the first row outside any SASS block
    cuda_view = False
    reader = csv.reader(ln for _, ln in numbered)
    rows: list[tuple[int, list[str]]] = []  # (the file's line where the row starts, the row)
    consumed = 0  # lines the reader has read so far: a quoted field may span lines
    try:
        for row in reader:
            rows.append((numbered[consumed][0], row))
            consumed = reader.line_num
    except csv.Error as exc:
        raise IrscopeError(f"{name}: not a CSV file ({exc})") from None
    for lineno, row in rows:
        if not row or not any(cell.strip() for cell in row):
            continue
        first = row[0].strip()
        if first in _KERNEL_LINES:
            pending_kernel = row[1] if len(row) > 1 else ""
            current = None
            continue
        if _is_sass_header(row):  # a header opens a block
            current = _RawBlock(pending_kernel or "", [c.strip() for c in row], [], lineno, [], after_file)
            raw_blocks.append(current)
            pending_kernel, after_file = None, False
            continue
        if first in _FILE_LINES or first in _CUDA_VIEW:  # a CUDA-source view's file or header
            cuda_view, current = True, None
            after_file = after_file or first in _FILE_LINES
            continue
        if any(c.strip() in _ADDRESS_COLUMNS for c in row) and current is None:
            raise IrscopeError(f"{name}: row {lineno} is a header with no 'Source' column (the page's other view?); "
                               f"{_EXPORT_HINT}")
        if current is None:
            if stray is None and not cuda_view:
                stray = (lineno, row)
            continue
        current.rows.append(row)
        current.row_linenos.append(lineno)
    if not raw_blocks:
        raise IrscopeError(_no_sass_view(name, stray, cuda_view))
    joined = _join_file_parts(raw_blocks)
    if not any(_is_instruction(r, _address_column(raw.header)) for raw in joined for r in raw.rows):
        raise IrscopeError(f"{name}: no instruction rows (addresses 0x...) under its 'Address','Source' header: a "
                           f"CUDA-source view only?; {_EXPORT_HINT}")
    blocks: list[NcuBlock] = []
    previous: _RawBlock | None = None
    launch = 0
    for raw in joined:
        if previous is not None and (raw.kernel, raw.header, raw.rows) == (previous.kernel, previous.header,
                                                                            previous.rows):
            continue  # ncu printed this launch's block twice
        previous = raw
        addr_col = _address_column(raw.header)
        if not any(_is_instruction(r, addr_col) for r in raw.rows):
            continue  # no instruction rows (a launch without SASS, or only source-line rows)
        if kernel is None or raw.kernel == "" or is_kernel_name(raw.kernel, kernel):
            blocks.append(_block(launch, raw.kernel, raw.header, list(zip(raw.row_linenos, raw.rows)), raw.lineno,
                                 name, cuda_view))
        launch += 1
    return tuple(blocks)


def _join_file_parts(raw_blocks: list[_RawBlock]) -> list[_RawBlock]:
    """Blocks with a ``cuda,sass`` view's parts of one launch joined: a part that follows
    a file's line, under the same header, for the same kernel, whose instructions
    interleave with the block before's without sharing an address (another launch of the
    same code has the same addresses; another variant's lie elsewhere)."""
    out: list[_RawBlock] = []
    for raw in raw_blocks:
        prev = out[-1] if out else None
        if (prev is not None and raw.after_file and raw.kernel in ("", prev.kernel) and raw.header == prev.header
                and _interleave(prev.addresses(), raw.addresses())):
            prev.rows += raw.rows
            prev.row_linenos += raw.row_linenos
            continue
        out.append(raw)
    return out


def _interleave(a: set[int], b: set[int]) -> bool:
    """Whether two sets of addresses are parts of one function: no address shared, and
    the ranges overlap (or a part has no instruction at all)."""
    if not a or not b:
        return True
    return not (a & b) and min(b) < max(a) and min(a) < max(b)


def _no_sass_view(name: str, stray: tuple[int, list[str]] | None, cuda_view: bool) -> str:
    """The one-line error for a text with no SASS block: what it is instead."""
    if cuda_view:
        return (f"{name}: a CUDA-source view only, which has no per-instruction samples; {_EXPORT_HINT} "
                "(or --print-source cuda,sass)")
    if stray is not None:
        lineno, row = stray
        page = _OTHER_PAGES.get(row[0].strip())
        if page:
            return f"{name}: ncu's {page}, not its source page; {_EXPORT_HINT}"
        return (f"{name}: not an Nsight Compute source export (row {lineno} is neither a 'Kernel Name' line nor "
                f"under an 'Address','Source' header); {_EXPORT_HINT}")
    return f"{name}: not an Nsight Compute source export (no 'Address','Source' header); {_EXPORT_HINT}"


def _block(index: int, kernel: str, header: list[str], rows: list[tuple[int, list[str]]], lineno: int,
           name: str, mixed: bool = False) -> NcuBlock:
    """One block's rows -> an :class:`NcuBlock` (columns by name from its header; rows
    without an instruction address, such as a ``cuda,sass`` view's source lines, skipped)."""
    col = {h: i for i, h in enumerate(header)}
    samples_col = next((col[c] for c in _SAMPLES if c in col), None)
    if samples_col is None:
        raise IrscopeError(f"{name}: the block of {kernel or 'a kernel'} (row {lineno}) has no '# Samples' column: "
                           "the report holds no PC sampling; profile with ncu --set full (or --section "
                           "SourceCounters --section WarpStateStats), then export its source page")
    addr_col = _address_column(header)
    # A cuda,sass header has two: "Line No","Source","Address","Source": the SASS is after the address.
    src = next((i for i in range(addr_col + 1, len(header)) if header[i] == _SOURCE), col[_SOURCE])
    not_issued_col = next((col[c] for c in _NOT_ISSUED if c in col), None)
    executed_col = next((col[c] for c in _EXECUTED if c in col), None)
    stall_cols = [(i, reason) for c, i in col.items() if (reason := _stall_reason(c)) is not None]
    placed: list[tuple[int, list[str], str]] = []  # address, row, where
    for row_no, row in rows:
        where = f"{name}: row {row_no}"
        if not _is_instruction(row, addr_col):
            continue  # a source line's row (cuda,sass), not an instruction
        if len(row) < len(header):
            raise IrscopeError(f"{where}: {len(row)} fields under a {len(header)}-column header (a cut export?)")
        try:
            placed.append((int(row[addr_col], 16), row, where))
        except ValueError:
            raise IrscopeError(f"{where}: address {row[addr_col]!r} is not hexadecimal") from None
    # In address order from the entry (a view printed file by file is not), each address once.
    placed.sort(key=lambda p: p[0])
    base = placed[0][0] if placed else 0
    out: list[SampledInstruction] = []
    for address, row, where in placed:
        if out and address - base == out[-1].offset:
            continue
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
    return NcuBlock(index, kernel, base, tuple(out), mixed)


def _stall_reason(column: str) -> str | None:
    """The reason an all-samples stall column counts (``stall_long_sb``, or with
    ``--print-metric-name name`` ``smsp__pcsamp_warps_issue_stalled_long_scoreboard``);
    None for any other column, the not-issued ones included."""
    if column in STALL_COLUMNS:
        return STALL_COLUMNS[column]
    if column.startswith(_METRIC_STALL) and not column.endswith("_not_issued"):
        reason = column[len(_METRIC_STALL):]
        return _METRIC_REASONS.get(reason, reason if reason in STALL_REASONS else UNLISTED)
    return None


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
