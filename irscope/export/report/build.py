"""``irscope report``: build the static HTML folder, atomically.

The report is built in a temporary folder next to the destination and renamed
into place, so a reader never sees half a report and a failed build leaves the
old one. An existing destination is replaced only when it is an earlier irscope
report (it holds :data:`MARKER`) or an empty folder: never a user's own folder."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import resources
from typing import Callable

from irscope import __version__
from irscope.core import Bundle, Capture, open_bundle
from irscope.core.target import normalise_target, target_key
from irscope.errors import IrscopeError
from irscope.export.report.across import Across, across_bundles, within_bundle
from irscope.export.report.collect import KernelMeta, kernel_meta, source_view, stage_texts
from irscope.export.report.functions import function_views
from irscope.export.report.pictures import draw_pictures
from irscope.export.report.pages import Stamp, compare_page, index_page, kernel_page, pair_page
from irscope.export.report.timeline import timeline
from irscope.export.report.experiments import experiments_section, tune_section
from irscope.export.report.heat import heat_map, heat_section
from irscope.export.report.why import why_section

MARKER = "irscope-report.json"
"""The file that makes a folder an irscope report (what it holds: :class:`ReportResult`)."""
ASSETS = ("report.js", "report.css")


@dataclass
class ReportResult:
    """What was written."""

    path: str
    pages: list[str] = field(default_factory=list)
    kernels: int = 0
    total_bytes: int = 0
    notes: list[str] = field(default_factory=list)


def _labels(paths: list[str]) -> list[str]:
    """Short distinct names for the bundles: the file name without ``.irscope``."""
    out: list[str] = []
    for p in paths:
        base = os.path.basename(os.path.normpath(p))
        base = base[: -len(".irscope")] if base.endswith(".irscope") else base
        label, n = base or p, 2
        while label in out:
            label, n = f"{base} ({n})", n + 1
        out.append(label)
    return out


def check_destination(path: str) -> None:
    """IrscopeError unless ``path`` is free, an empty folder, or an earlier report."""
    if not os.path.lexists(path):
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise IrscopeError(f"cannot write the report to {path}: folder {parent} does not exist")
        return
    if os.path.islink(path) or not os.path.isdir(path):
        raise IrscopeError(f"{path} exists and is not a folder: choose another -o")
    if os.listdir(path) and not os.path.isfile(os.path.join(path, MARKER)):
        raise IrscopeError(f"{path} exists and is not an irscope report: choose another -o (nothing was changed)")


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8", errors="replace") as fh:
        fh.write(text)


def _swap_in(tmp: str, dest: str) -> None:
    """Put the finished folder ``tmp`` at ``dest``, replacing an earlier report."""
    if not os.path.lexists(dest):
        os.rename(tmp, dest)
        return
    check_destination(dest)  # again: it may have changed while the report was built
    aside = tempfile.mkdtemp(prefix=f".{os.path.basename(dest)}.old-", dir=os.path.dirname(os.path.abspath(dest)))
    os.rmdir(aside)
    os.rename(dest, aside)
    try:
        os.rename(tmp, dest)
    except OSError:
        os.rename(aside, dest)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def build_report(bundle_paths: list[str], out_dir: str, *, command: str | None = None,
                 progress: Callable[[str], None] | None = None, pictures=None, kernel: str | None = None,
                 target: str | None = None, variant: str | None = None) -> ReportResult:
    """Write the report of ``bundle_paths`` to the folder ``out_dir``.

    ``command`` is stamped on every page (default: this process's argv);
    ``progress`` gets a line per kernel; ``pictures`` replaces the function that
    draws a kernel's graphs and layouts (:func:`draw_pictures`); False draws none.
    ``kernel`` (with ``target`` and ``variant``) reports the one capture of each
    bundle that every command would pick (:func:`irscope.core.select_capture`);
    ``target`` alone keeps each bundle's captures for that target."""
    if not bundle_paths:
        raise IrscopeError("report needs at least one bundle")
    out_dir = os.path.normpath(out_dir)  # "report/" names the folder "report"
    check_destination(out_dir)
    say = progress or (lambda _msg: None)
    bundles = []
    try:
        for p in bundle_paths:
            bundles.append(open_bundle(p))
        chosen = [_chosen(b, kernel, target, variant) for b in bundles]
        return _build(bundle_paths, bundles, out_dir, command, say, pictures, chosen)
    finally:
        for b in bundles:
            b.close()


def _chosen(bundle: Bundle, kernel: str | None, target: str | None, variant: str | None) -> list[Capture]:
    """The captures of ``bundle`` the report shows: one, by the selection every command
    shares, when ``kernel`` is named; else every capture (of ``target``, if given)."""
    if kernel is not None:
        return [bundle.capture(kernel, target, variant)]
    if variant is not None:
        raise IrscopeError("--variant picks a capture of a KERNEL: name the kernel too (--kernel K)")
    if target is None:
        return bundle.captures()
    want = normalise_target(target)
    return [c for c in bundle.captures() if target_key(c.target) == want]


def _build(paths, bundles, out_dir, command, say, pictures, chosen: list[list[Capture]]) -> ReportResult:
    labels = _labels(paths)
    caps = list(zip(labels, chosen))
    if not any(c for _, c in caps):
        raise IrscopeError(f"{', '.join(paths)}: no captures to report")
    versions = tuple(dict.fromkeys(c.triton_version or "?" for _, cs in caps for c in cs))
    if command is None:
        command = shlex.join(["irscope", *sys.argv[1:]])
    stamp = Stamp(command, __version__, versions, datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    pages: dict[tuple[str, int], str] = {}
    for bi, (label, cs) in enumerate(caps, 1):
        for c in cs:
            pages[(label, c.id)] = f"kernel-{bi}-{c.id}.html"

    result = ReportResult(out_dir)
    if pictures is None and shutil.which("dot") is None:
        # One note for the report, not two per kernel; every picture needs dot.
        result.notes.append("no pictures: Graphviz's dot is not installed (apt-get install graphviz, or run "
                            "scripts/setup.sh)")
        pictures = False
    parent = os.path.dirname(os.path.abspath(out_dir))
    try:
        tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(os.path.normpath(out_dir))}.tmp-", dir=parent)
    except OSError as exc:  # a read-only folder (or /proc): one line, as every command says it
        raise IrscopeError(f"cannot write the report to {out_dir}: {exc.strerror or exc}") from None
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o777 & ~mask)  # mkdtemp makes it private; a report is as readable as any folder
        os.mkdir(os.path.join(tmp, "assets"))
        for name in ASSETS:
            data = resources.files("irscope.export.report").joinpath("assets").joinpath(name).read_bytes()
            with open(os.path.join(tmp, "assets", name), "wb") as fh:
                fh.write(data)
        metas: list[KernelMeta] = []
        total = sum(len(cs) for _, cs in caps)
        for label, cs in caps:
            for c in cs:
                say(f"[{len(metas) + 1}/{total}] {c.title()}")
                meta = kernel_meta(c, pages[(label, c.id)], label)
                metas.append(meta)
                _kernel(tmp, c, meta, stamp, pictures, result)
        across: Across | None = None
        if len(caps) > 1:
            say("pairing kernels across bundles")
            across = across_bundles(caps, lambda label, c: pages[(label, c.id)])
        else:
            across = within_bundle(caps[0][1])
        compare = None
        if across is not None:
            compare = "compare.html"
            _write(os.path.join(tmp, compare), compare_page(across, stamp))
            result.pages.append(compare)
            for p in across.pairs:
                _write(os.path.join(tmp, p.page), pair_page(p, stamp))
                result.pages.append(p.page)
        _write(os.path.join(tmp, "index.html"),
               index_page(metas, list(zip(labels, paths)), stamp, compare, _tune_section(bundles, caps, pages)))
        result.pages.insert(0, "index.html")
        result.kernels = len(metas)
        with open(os.path.join(tmp, MARKER), "w", encoding="utf-8") as fh:
            json.dump({"generator": "irscope report", "stamp": stamp.to_json(), "bundles": list(paths),
                       "pages": result.pages, "notes": result.notes}, fh, indent=2)
        result.total_bytes = folder_bytes(tmp)
        try:
            _swap_in(tmp, out_dir)
        except OSError as exc:
            raise IrscopeError(f"cannot write the report to {out_dir}: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return result


def _tune_section(bundles: list[Bundle], caps: list[tuple[str, list[Capture]]],
                  pages: dict[tuple[str, int], str]) -> str:
    """The index's tune tables: those of each bundle about a kernel the report shows,
    each row linked to its capture's page when the report has it."""
    def page_of(label: str) -> Callable[[int], str | None]:
        return lambda cid: pages.get((label, cid))

    kernels = {c.kernel for _, cs in caps for c in cs}
    return tune_section([(label, b, page_of(label)) for (label, _), b in zip(caps, bundles)], kernels)


def _kernel(tmp: str, c: Capture, meta, stamp: Stamp, pictures, result: ReportResult) -> None:
    """Write one kernel page."""
    stages = stage_texts(c)
    line_ops: dict[int, int] = {}
    for s in stages:
        for line, ops in s.line_ops.items():
            line_ops[line] = line_ops.get(line, 0) + len(ops)
    pics = (pictures or draw_pictures)(c, line_ops) if pictures is not False else None
    if pics is not None:
        result.notes += [f"{c.title()}: {n}" for n in pics.notes]
    html = kernel_page(meta, source_view(c), stages, timeline(c), stamp, pics, function_views(c, stages),
                       failure=c.failure, why=why_section(c), whatif=experiments_section(c), heat=heat_section(c),
                       heat_map=heat_map(c))
    _write(os.path.join(tmp, meta.page), html)
    result.pages.append(meta.page)


def folder_bytes(path: str) -> int:
    """Bytes of every file under ``path``."""
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


