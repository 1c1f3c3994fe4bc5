"""Turn one spool record written by the child hook into a CapturedKernel."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from irscope.compiler.failure_text import (FRONTEND_AT, PASS_MANAGER_FAILED, frontend_position, meaningful_line,
                                           pipeline_diagnostic)
from irscope.compiler.passdump import split_pass_dump
from irscope.compiler.remarks import RECORDED, parse_diagnostics
from irscope.compiler.stages import (AMDGCN, BINARY_STAGES, CUBIN, ERROR, EXACT_STAGES, JSON, KIND_LLVM, KIND_MIR,
                                     KIND_MLIR, LLIR, LOG, PTX, SASS, SOURCE)
from irscope.capture.timing import (assign_numbered_times, assign_times, parse_llvm_timing_reports,
                                    parse_timing_reports)
from irscope.compiler.records import CapturedKernel, PassRecord, Resources
from irscope.ir.ptx import static_shared_bytes
from irscope.capture.tools import amdgcn_resources, resources_from_binary, sass_with_lines
from irscope.capture.helper_sources import helper_sources

FAKE_TIMING_NOTE = ("compiled while timed by irscope's stand-in benchmarker (compile-only: no GPU): every "
                    "timing is a fake 1.0 ms, so an autotuner keeps its first config")
"""The note on a capture compiled inside ``do_bench`` or an autotuner's timing, with no GPU."""
PLACEHOLDER_NOTE = ("compiled after the script read tensor values, which are placeholders in a compile-only run "
                    "(checks pass, numbers are 1): if such a value chose this launch, a GPU run may compile "
                    "another specialisation")
"""The note on a capture compiled after a placeholder value read (compile-only, no GPU)."""

_OPTION_KEYS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
_OPTION_DEFAULTS = {"num_ctas": 1, "maxnreg": None}


def variant_label(constexprs: dict, options: dict) -> str:
    """A short, stable, human-readable name for a specialisation.

    ``BLOCK_SIZE=1024,num_warps=4,num_stages=3``: the constexpr values (and the
    integer arguments Triton folded to constants) plus the launch options that
    change the code. The same label is produced by any Triton version, so
    variants can be matched across captures.
    """
    parts = [f"{k}={_short(v)}" for k, v in (constexprs or {}).items() if v is not None]
    for key in _OPTION_KEYS:
        value = (options or {}).get(key)
        if key in _OPTION_DEFAULTS and value == _OPTION_DEFAULTS[key]:
            continue
        if value is not None:
            parts.append(f"{key}={value}")
    return ",".join(parts) or "default"


# A ``@triton.jit`` function passed as a constexpr, as Triton prints it.
_JIT_FUNCTION = re.compile(r"^JITFunction\([\w.]*:(?:[\w.<>]+\.)?(\w+)\)$")


def _short(value) -> str:
    text = str(value)
    function = _JIT_FUNCTION.match(text)
    if function:  # ACT=relu, as the launch wrote it, not ACT=JITFunction(__main__:...
        return function.group(1)
    return text if len(text) <= 24 else text[:21] + "..."


def _error_summary(error: dict, meta: dict | None = None, log: str = "") -> str:
    """One line for a compile error: type, where (frontend errors), the most telling line;
    a failed MLIR pass (``PassManager::run failed``) gets the diagnostic it printed to
    the ``log``."""
    message = error.get("message") or ""
    etype = error.get("type", "Error")
    frontend = FRONTEND_AT.match(message.lstrip())
    if frontend or error.get("where"):
        # CompilationError puts the source snippet first and the reason last.
        lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip() and not set(ln.strip()) <= {"^", " ", "~"}]
        reason = lines[-1] if lines else ""
        where = _frontend_where(error, message, meta or {})
        return f"{etype} at {where}: {reason[:300]}" if where else f"{etype}: {reason[:300]}"
    line = meaningful_line(message)
    why = pipeline_diagnostic(log) if line.strip() == PASS_MANAGER_FAILED else None
    return f"{etype}: {line[:300]}" + (f": {why}" if why else "")


def _frontend_where(error: dict, message: str, meta: dict) -> str:
    """``kernel.py:14`` for a frontend error; Triton's ``at 2:38`` counts lines from
    the compiled function's ``def``."""
    where = error.get("where") or {}
    if where.get("file") and where.get("line"):
        return f"{os.path.basename(where['file'])}:{where['line']}"
    position = frontend_position(message, meta.get("first_line"))
    if position is not None and meta.get("file"):
        return f"{os.path.basename(meta['file'])}:{position[0]}"
    return ""


def _pass_record(seq: int, stage: str, snap) -> PassRecord:
    """A stream snapshot placed in the pipeline. LLVM's own anchors (a function
    name, or ``[module]``) become anchor 'function' / 'module' plus the name."""
    anchor, anchor_name = snap.anchor_op, snap.anchor_name
    if snap.family != KIND_MLIR:
        anchor, anchor_name = ("module", "") if anchor_name in ("[module]", "") else ("function", anchor_name)
    if isinstance(snap, _DumpSnapshot):
        rec = _DumpPassRecord(seq, stage, snap.family, snap.kind, snap.pass_name, snap.argument, snap.options,
                              anchor, anchor_name, "")
        rec._dump, rec._spans = snap.dump, snap.byte_spans
        return rec
    return PassRecord(seq, stage, snap.family, snap.kind, snap.pass_name, snap.argument, snap.options, anchor,
                      anchor_name, snap.text)


# -- the dump, read a piece at a time ------------------------------------------
# An --llvm-passes compile dumps 100+ MB. Holding it, its decoded text and every
# snapshot's copy at once is what made the parent of `irscope run` peak at
# 600 MB; so the dump is split a piece at a time and a snapshot's text is read
# back from the file when the bundle writer asks for it (docs/benchmarks.md).

PIECE_BYTES = 8 << 20
"""About how much of a dump is decoded and split at once (more when one snapshot is larger)."""


class _DumpFile:
    """A record's dump.txt, open while any of its pass records lives: an open
    descriptor goes on reading after the spool record is deleted."""

    __slots__ = ("fd", "size")

    def __init__(self, path: str):
        self.fd, self.size = -1, 0
        try:
            self.fd = os.open(path, os.O_RDONLY)
            self.size = os.fstat(self.fd).st_size
        except OSError:
            pass

    def read(self, start: int, end: int) -> bytes:
        start, end = max(0, start), min(end, self.size)
        chunks = []
        while start < end:
            data = os.pread(self.fd, end - start, start)
            if not data:
                break
            chunks.append(data)
            start += len(data)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def text(self, spans: tuple[tuple[int, int], ...]) -> str:
        return b"".join(self.read(s, e) for s, e in spans).decode("utf-8", "replace")

    def __del__(self):
        if self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = -1


class _DumpPassRecord(PassRecord):
    """A PassRecord whose text is read from the dump file on each access (the bundle
    writer reads it once); assigning ``text`` makes it an ordinary one."""

    __slots__ = ("_dump", "_spans")
    _dump: _DumpFile | None
    _spans: tuple[tuple[int, int], ...]

    @property
    def text(self) -> str:
        if self._dump is None:
            return _RECORD_TEXT.__get__(self)
        return self._dump.text(self._spans)

    @text.setter
    def text(self, value: str) -> None:
        _RECORD_TEXT.__set__(self, value)
        self._dump = None


# PassRecord's own ``text`` slot, which the property above shadows.
_RECORD_TEXT: Any = vars(PassRecord)["text"]


class _DumpSnapshot:
    """A PassSnapshot whose body is byte ranges of the dump file."""

    __slots__ = ("snap", "dump", "byte_spans")

    def __init__(self, snap, dump: _DumpFile, byte_spans: tuple[tuple[int, int], ...]):
        self.snap, self.dump, self.byte_spans = snap, dump, byte_spans

    def __getattr__(self, name):
        return getattr(self.snap, name)


def _is_header_line(line: str) -> bool:
    """Whether split_pass_dump takes this line for a snapshot header: it judges a
    header by its own line alone, so a stream cut just before one splits as the
    whole stream does."""
    return len(split_pass_dump(line)) == 1


def _last_cut(data: bytes) -> int:
    """Offset (> 0) of the last complete header line that starts a line of ``data``; -1 if none."""
    hi = len(data)
    while True:
        hit = data.rfind(b"IR Dump ", 0, hi)
        if hit < 0:
            return -1
        ls = data.rfind(b"\n", 0, hit) + 1
        le = data.find(b"\n", hit)
        if ls == 0:
            return -1
        if le >= 0 and _is_header_line(data[ls:le + 1].decode("utf-8", "replace")):
            return ls
        hi = ls


def _byte_spans(text: str, base: int, spans_of) -> list[tuple[tuple[int, int], ...]]:
    """Character spans of ``text`` (valid UTF-8 at ``base`` in the file) as file byte ranges."""
    if text.isascii():
        return [tuple((base + s, base + e) for s, e in spans) for spans in spans_of]
    where, pos, at = {}, 0, base
    for b in sorted({b for spans in spans_of for span in spans for b in span}):
        at += len(text[pos:b].encode("utf-8"))
        where[b], pos = at, b
    return [tuple((where[s], where[e]) for s, e in spans) for spans in spans_of]


def _split_dump(dump: _DumpFile, start: int, end: int) -> tuple[list, list[tuple[int, str]], list[str | None]]:
    """``split_pass_dump`` of ``dump[start:end]``: (snapshots, other lines, and for
    each other line the pass whose dump came last before it: :func:`_emitter`).

    The range is decoded and split a piece of about PIECE_BYTES at a time, each
    cut just before a snapshot header, so only a piece is in memory; each
    snapshot comes back as a _DumpSnapshot that reads its text from the file.
    A piece that is not valid UTF-8 keeps its decoded text instead (its
    snapshots slice that, as split_pass_dump's own do).
    """
    end = min(end, dump.size)
    snaps: list = []
    other: list[tuple[int, str]] = []
    emitters: list[str | None] = []
    last: str | None = None  # the emitter in effect at the end of the pieces so far
    pos = start
    while pos < end:
        data = dump.read(pos, min(end, pos + PIECE_BYTES))
        cut = len(data)
        while pos + len(data) < end:
            cut = _last_cut(data)
            if cut > 0:
                break
            more = dump.read(pos + len(data), min(end, pos + 2 * len(data)))  # one snapshot larger than a piece
            cut = len(data) + len(more)
            if not more:  # the file ended early
                break
            data += more
        if not data:
            break
        piece = data[:cut]
        del data
        try:
            text, exact = piece.decode("utf-8"), True
        except UnicodeDecodeError:
            text, exact = piece.decode("utf-8", "replace"), False
        del piece
        dumped = split_pass_dump(text)
        other.extend(dumped.other)
        heads = iter(dumped.snapshots)
        head = next(heads, None)
        for line, _ in dumped.other:  # both in stream order, with line numbers of this piece
            while head is not None and head.line_offset < line:
                last = _emitter(head, last)
                head = next(heads, None)
            emitters.append(last)
        while head is not None:
            last = _emitter(head, last)
            head = next(heads, None)
        if exact:
            spans = _byte_spans(text, pos, [s.spans for s in dumped])
            for s, b in zip(dumped, spans):
                s.stream = ""  # let the piece go: the text is read back from the file
                snaps.append(_DumpSnapshot(s, dump, b))
        else:
            snaps.extend(dumped)
        pos += cut
    return snaps, other, emitters


def _emitter(snap, previous: str | None) -> str | None:
    """The pass that emits what the compile writes after ``snap``'s dump: the pass an
    MLIR ``Before`` dump announces runs next; after an ``After`` dump (LLVM's), who
    writes next is not known; a pass's internal dump (the pipeliner's steps) leaves
    the pass in effect as it was."""
    if snap.kind == "internal":
        return previous
    return snap.pass_name if snap.kind == "before" else None


def read_record(record_dir: str, *, run_tools: bool = True) -> CapturedKernel:
    """Read ``rec-*/`` (meta.json, dump.txt and the stage files it points to).

    ``run_tools`` runs nvdisasm/cuobjdump/ptxas from the capturing Triton's wheel
    for SASS and resource usage.
    """
    with open(os.path.join(record_dir, "meta.json")) as f:
        meta = json.load(f)
    dump = _DumpFile(os.path.join(record_dir, "dump.txt"))  # read a piece at a time (see _split_dump)

    passes: list[PassRecord] = []
    logs: list[str] = []
    # Every line outside the pass dumps, with its stage and emitting pass: the remarks are read from these.
    stray_lines: list[tuple[str, str | None, str | None]] = []
    covered = 0
    for st in meta.get("stages", []):
        start, end = st.get("dump_start", -1), st.get("dump_end", -1)
        if start < 0 or end < start:
            continue
        if start > covered:
            gap = dump.read(covered, start).decode("utf-8", "replace")
            logs.append(gap)
            stray_lines.extend((line, None, None) for line in gap.splitlines())
        covered = max(covered, end)
        dumped, other, emitters = _split_dump(dump, start, end)
        stray_lines.extend((text, st["stage"], emitter) for (_, text), emitter in zip(other, emitters))
        stray = "".join(text + "\n" for _, text in other)
        if stray:
            logs.append(stray)
        stage_passes = [_pass_record(len(passes) + i, st["stage"], snap) for i, snap in enumerate(dumped)]
        mlir = [p for p in stage_passes if p.kind == KIND_MLIR]
        for report in parse_timing_reports(stray):
            nested = [p.anchor not in ("builtin.module", "") for p in mlir]
            for p, secs in zip(mlir, assign_times([p.name for p in mlir], report, nested)):
                if secs is not None and p.seconds is None:
                    p.seconds = secs
        legacy = [p for p in stage_passes if p.kind in (KIND_LLVM, KIND_MIR)]
        llvm_reports = parse_llvm_timing_reports(stray) if legacy else []
        for p, secs in zip(legacy, assign_numbered_times([p.name for p in legacy], llvm_reports)):
            if secs is not None and p.seconds is None:
                p.seconds = secs
        passes.extend(stage_passes)
    if covered < dump.size:
        tail = dump.read(covered, dump.size).decode("utf-8", "replace")
        logs.append(tail)
        stray_lines.extend((line, None, None) for line in tail.splitlines())
    remarks_status = meta.get("remarks")
    remarks = parse_diagnostics(stray_lines) if remarks_status == RECORDED else []

    stages: dict[str, str | bytes] = {}
    metadata: dict = {}
    for fname, path in (meta.get("files") or {}).items():
        ext = fname.rsplit(".", 1)[-1]
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        if ext == JSON:
            try:
                metadata = json.loads(data)
            except ValueError:
                pass
            stages[JSON] = data.decode("utf-8", "replace")
        elif ext in BINARY_STAGES:
            stages[ext] = data
        else:
            stages[ext] = data.decode("utf-8", "replace")

    notes: list[str] = []
    exact = meta.get("exact") or {}
    if exact.get("error"):
        notes.append(f"no exact TTGIR links: the USE_IR_LOC=ttgir compile failed: {exact['error']}")
    exact_cubin = None
    for fname, path in (exact.get("files") or {}).items():
        ext = fname.rsplit(".", 1)[-1]
        # The USE_IR_LOC=ttgir compile (--exact-links): its SASS comes from its cubin.
        if ext in (LLIR, PTX, CUBIN):
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                notes.append(f"exact-link stage {ext} unreadable")
                continue
            if ext == CUBIN:
                exact_cubin = data
            else:
                stages[EXACT_STAGES[ext]] = data.decode("utf-8", "replace")
    target = meta.get("target") or ""
    resources = Resources()
    options = meta.get("options") or {}
    cubin, ptx = stages.get(CUBIN), stages.get(PTX)
    ptx_text = ptx if isinstance(ptx, str) else None
    if run_tools and isinstance(cubin, bytes):  # (a binary stage: bytes whenever present)
        sass, note = sass_with_lines(meta.get("tools_dir"), cubin)
        if sass is not None:
            stages[SASS] = sass
        else:
            notes.append(f"no SASS: {note}")
        if exact_cubin is not None:
            # SASS whose //## File markers are TTGIR lines: exact TTGIR -> SASS links.
            exact_sass, _ = sass_with_lines(meta.get("tools_dir"), exact_cubin)
            if exact_sass is not None:
                stages[EXACT_STAGES[SASS]] = exact_sass
        arch = int(target[3:]) if target.startswith("sm_") and target[3:].isdigit() else 90
        resources = resources_from_binary(meta.get("tools_dir"), cubin, ptx_text, arch, options)
        notes.extend(resources.notes)
    if meta.get("fake_timing"):
        notes.append(FAKE_TIMING_NOTE)
    if meta.get("placeholder_reads"):
        notes.append(PLACEHOLDER_NOTE)
    if target.startswith("gfx"):
        notes.append("AMD target: no SASS (NVIDIA only); registers and spills read from the AMDGCN assembly")
        amdgcn = stages.get(AMDGCN)
        resources = amdgcn_resources(amdgcn if isinstance(amdgcn, str) else "")
    if resources.shared is None and metadata.get("shared") is not None:
        resources.shared = metadata["shared"]
    if ptx_text is not None:
        resources.shared_static = static_shared_bytes(ptx_text)

    error = meta.get("error")
    failed_stage = failed_pass = None
    if error:
        failed = [s for s in meta.get("stages", []) if not s.get("ok", True)]
        if failed:
            failed_stage = failed[0]["stage"]
            in_stage = [p for p in passes if p.stage == failed_stage]
            explicit = [p for p in in_stage if p.when == "after-failed"]
            last = explicit[-1] if explicit else (in_stage[-1] if in_stage else None)
            if last is not None:
                failed_pass = f"{last.name} ({last.argument})" if last.argument else last.name
        else:
            failed_stage = "frontend"
    constexprs = meta.get("constexprs") or {}
    printed = _read_text(os.path.join(record_dir, "stdout.txt"))
    if printed.strip():
        # What the compile printed (Triton's PTX reproducer of a ptxas failure): off
        # the terminal, kept here.
        logs.append("\n" + printed)
    error_detail = (error.get("message", "") + "\n\n" + error.get("traceback", "")).strip() + "\n" if error else None
    if error_detail:
        stages[ERROR] = error_detail  # `irscope cat BUNDLE KERNEL --stage error`
    log = "".join(logs)
    if log.strip():
        # Kept as a stage so it is compressed and deduplicated like the IR.
        stages[LOG] = log
    return CapturedKernel(
        kernel=meta.get("kernel") or "<unknown>",
        file=meta.get("file"),
        first_line=meta.get("first_line"),
        source=meta.get("source"),
        target=target,
        variant=variant_label(constexprs, options),
        hash=meta.get("hash") or metadata.get("hash"),
        signature=meta.get("signature") or {},
        constexprs=constexprs,
        attrs=meta.get("attrs") or {},
        options=options,
        versions=meta.get("versions") or {},
        host=meta.get("host") or "",
        argv=meta.get("argv") or [],
        started=meta.get("started") or "",
        compile_seconds=float(meta.get("seconds") or 0.0),
        stage_seconds={s["stage"]: s.get("seconds") for s in meta.get("stages", []) if s.get("seconds") is not None},
        stages=stages,
        passes=passes,
        resources=resources,
        metadata=metadata,
        mode=meta.get("mode") or "",
        error=_error_summary(error, meta, log) if error else None,
        error_detail=error_detail,
        failed_stage=failed_stage,
        failed_pass=failed_pass,
        notes=notes,
        helpers=helper_sources(_text_or_none(stages.get(SOURCE)), meta.get("file"), meta.get("first_line")),
        remarks=remarks,
        remarks_status=remarks_status,
        launch=meta.get("launch") if isinstance(meta.get("launch"), dict) else None,
        globals=meta.get("globals") if isinstance(meta.get("globals"), dict) else None,
    )


def _text_or_none(text: str | bytes | None) -> str | None:
    return text if isinstance(text, str) else None


def _read_text(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _cache_files(cache_dir: str) -> dict[str, str]:
    """{file name: path} of the stage files an unfinished compile left in its cache."""
    found = {}
    for root, _dirs, files in os.walk(cache_dir):
        for f in files:
            if ".tmp." in f or f.startswith("__grp__") or f == "lock":
                continue
            found[f] = os.path.join(root, f)
    return found


def read_unfinished_record(record_dir: str, kind: str, signal_name: str | None = None, *,
                           run_tools: bool = True) -> CapturedKernel:
    """A compile the child process died in (``rec-*.tmp/``: ``progress.json``,
    ``stages.json``, ``dump.txt``), as a failed capture with every stage that had
    finished. ``kind``: ``crashed`` (native abort: the error is the native text the
    compiler wrote to stderr), ``killed`` (SIGKILL, SIGTERM), ``interrupted``
    (Ctrl-C) or ``ended`` (the process exited in the middle of the compile)."""
    with open(os.path.join(record_dir, "progress.json")) as f:
        meta = json.load(f)
    try:
        with open(os.path.join(record_dir, "stages.json")) as f:
            stages = json.load(f)
    except (OSError, ValueError):
        stages = []
    try:
        with open(os.path.join(record_dir, "dump.txt"), "rb") as f:
            dump = f.read()
    except OSError:
        dump = b""
    running = stages[-1] if stages and "ok" not in stages[-1] else None
    if running is not None:
        running["dump_end"] = len(dump)
        running["ok"] = False
    else:  # died between stages (or in the frontend): the next one never started
        stages.append({"stage": "frontend" if not stages else "after " + stages[-1]["stage"], "ok": False,
                       "dump_start": -1, "dump_end": -1})
    start = max(0, (running or {}).get("dump_start", 0) or 0)
    native = ""
    if kind in ("crashed", "ended"):  # what the compiler said as it died (killed from outside: nothing)
        native = "\n".join(text for _, text in split_pass_dump(dump[start:].decode("utf-8", "replace")).other).strip()
    dropped = 0
    if kind == "interrupted" and running is not None:
        # Ctrl-C must end the run at once: the unfinished stage's snapshots (with
        # --llvm-passes, megabytes to compress) are not kept; the finished stages are.
        dropped = len(dump) - start
        running["dump_end"] = start
        os.truncate(os.path.join(record_dir, "dump.txt"), start)
    line = meaningful_line(native) if native else ""
    stage_name = running["stage"] if running is not None else stages[-1]["stage"]
    sig = f" ({signal_name})" if signal_name else ""
    if kind == "crashed":
        summary = f"the compiler crashed{sig} in {stage_name}" + (f": {line}" if line else "")
    elif kind == "killed":
        summary = f"the compiling process was killed{sig} in {stage_name}"
    elif kind == "interrupted":
        summary = f"interrupted (Ctrl-C) in {stage_name}"
    else:
        summary = f"the compiling process exited in {stage_name}" + (f": {line}" if line else "")
    meta["stages"] = stages
    cache_dir = meta.get("cache_dir") or ""
    if not os.path.isdir(cache_dir):  # the spool moved: its cache/<pid>-<seq> beside the record
        cache_dir = os.path.join(os.path.dirname(os.path.abspath(record_dir)), "cache",
                                 f"{meta.get('pid')}-{meta.get('seq')}")
    meta["files"] = _cache_files(cache_dir)
    meta["error"] = {"type": signal_name or kind, "message": native or summary, "traceback": ""}
    meta.setdefault("seconds", None)
    tmp_meta = os.path.join(record_dir, "meta.json")
    with open(tmp_meta, "w") as f:
        json.dump(meta, f)
    kernel = read_record(record_dir, run_tools=run_tools)
    kernel.error = summary[:400]
    detail = summary + ("\n\nWhat the compiler wrote to stderr before it ended:\n" + native if native else "") + "\n"
    if dropped:
        detail += f"(the pass dumps of the interrupted stage {stage_name}, {dropped} bytes, were not kept)\n"
    kernel.error_detail = detail
    kernel.stages[ERROR] = detail
    if running is None:
        kernel.failed_stage = stage_name
    return kernel
