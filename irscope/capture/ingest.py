"""Turn one spool record written by the child hook into a CapturedKernel."""

from __future__ import annotations

import json
import os

from irscope.vocab.passdump import split_pass_dump
from irscope.vocab.stages import BINARY_STAGES, EXACT_STAGES
from irscope.capture.timing import (assign_numbered_times, assign_times, parse_llvm_timing_reports,
                                    parse_timing_reports)
from irscope.vocab.records import CapturedKernel, PassRecord, Resources
from irscope.ir.ptx import static_shared_bytes
from irscope.capture.tools import amdgcn_resources, resources_from_binary, sass_with_lines

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


def _short(value) -> str:
    text = str(value)
    return text if len(text) <= 24 else text[:21] + "..."


def _error_summary(error: dict) -> str:
    """One line for a compile error: type and the most telling line."""
    message = error.get("message") or ""
    # CompilationError puts the source snippet first and the reason last.
    lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip() and not set(ln.strip()) <= {"^", " "}]
    reason = lines[-1] if lines else ""
    return f"{error.get('type', 'Error')}: {reason[:300]}"


def _pass_record(seq: int, stage: str, snap) -> PassRecord:
    """A stream snapshot placed in the pipeline. LLVM's own anchors (a function
    name, or ``[module]``) become anchor 'function' / 'module' plus the name."""
    anchor, anchor_name = snap.anchor_op, snap.anchor_name
    if snap.family != "mlir":
        anchor, anchor_name = ("module", "") if anchor_name in ("[module]", "") else ("function", anchor_name)
    return PassRecord(seq, stage, snap.family, snap.kind, snap.pass_name, snap.argument, snap.options, anchor,
                      anchor_name, snap.text)


def read_record(record_dir: str, *, run_tools: bool = True) -> CapturedKernel:
    """Read ``rec-*/`` (meta.json, dump.txt and the stage files it points to).

    ``run_tools`` runs nvdisasm/cuobjdump/ptxas from the capturing Triton's wheel
    for SASS and resource usage.
    """
    with open(os.path.join(record_dir, "meta.json")) as f:
        meta = json.load(f)
    dump_path = os.path.join(record_dir, "dump.txt")
    dump = b""
    if os.path.exists(dump_path):
        with open(dump_path, "rb") as f:
            dump = f.read()

    passes: list[PassRecord] = []
    logs: list[str] = []
    covered = 0
    for st in meta.get("stages", []):
        start, end = st.get("dump_start", -1), st.get("dump_end", -1)
        if start < 0 or end < start:
            continue
        if start > covered:
            logs.append(dump[covered:start].decode("utf-8", "replace"))
        covered = max(covered, end)
        dumped = split_pass_dump(dump[start:end].decode("utf-8", "replace"))
        stray = "".join(text + "\n" for _, text in dumped.other)
        if stray:
            logs.append(stray)
        stage_passes = [_pass_record(len(passes) + i, st["stage"], snap) for i, snap in enumerate(dumped)]
        mlir = [p for p in stage_passes if p.kind == "mlir"]
        for report in parse_timing_reports(stray):
            nested = [p.anchor not in ("builtin.module", "") for p in mlir]
            for p, secs in zip(mlir, assign_times([p.name for p in mlir], report, nested)):
                if secs is not None and p.seconds is None:
                    p.seconds = secs
        legacy = [p for p in stage_passes if p.kind in ("llvm", "mir")]
        llvm_reports = parse_llvm_timing_reports(stray) if legacy else []
        for p, secs in zip(legacy, assign_numbered_times([p.name for p in legacy], llvm_reports)):
            if secs is not None and p.seconds is None:
                p.seconds = secs
        passes.extend(stage_passes)
    if covered < len(dump):
        logs.append(dump[covered:].decode("utf-8", "replace"))

    stages: dict[str, str | bytes] = {}
    metadata: dict = {}
    for fname, path in (meta.get("files") or {}).items():
        ext = fname.rsplit(".", 1)[-1]
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        if ext == "json":
            try:
                metadata = json.loads(data)
            except ValueError:
                pass
            stages["json"] = data.decode("utf-8", "replace")
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
        if ext in ("llir", "ptx", "cubin"):
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                notes.append(f"exact-link stage {ext} unreadable")
                continue
            if ext == "cubin":
                exact_cubin = data
            else:
                stages[EXACT_STAGES[ext]] = data.decode("utf-8", "replace")
    target = meta.get("target") or ""
    resources = Resources()
    options = meta.get("options") or {}
    if run_tools and "cubin" in stages:
        sass, note = sass_with_lines(meta.get("tools_dir"), stages["cubin"])
        if sass is not None:
            stages["sass"] = sass
        else:
            notes.append(f"no SASS: {note}")
        if exact_cubin is not None:
            # SASS whose //## File markers are TTGIR lines: exact TTGIR -> SASS links.
            exact_sass, _ = sass_with_lines(meta.get("tools_dir"), exact_cubin)
            if exact_sass is not None:
                stages["sass_ttgirloc"] = exact_sass
        arch = int(target[3:]) if target.startswith("sm_") and target[3:].isdigit() else 90
        resources = resources_from_binary(meta.get("tools_dir"), stages["cubin"], stages.get("ptx"), arch, options)
        notes.extend(resources.notes)
    if target.startswith("gfx"):
        notes.append("AMD target: no SASS (NVIDIA only); registers and spills read from the AMDGCN assembly")
        resources = amdgcn_resources(stages.get("amdgcn") or "")
    if resources.shared is None and metadata.get("shared") is not None:
        resources.shared = metadata["shared"]
    if isinstance(stages.get("ptx"), str):
        resources.shared_static = static_shared_bytes(stages["ptx"])

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
    log = "".join(logs)
    if log.strip():
        # Kept as a stage so it is compressed and deduplicated like the IR.
        stages["log"] = log
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
        error=_error_summary(error) if error else None,
        error_detail=(error.get("message", "") + "\n\n" + error.get("traceback", "")) if error else None,
        failed_stage=failed_stage,
        failed_pass=failed_pass,
        notes=notes,
    )
