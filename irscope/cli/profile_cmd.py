"""``irscope profile``: attach GPU profiles made elsewhere to a capture, list them, remove one.

    irscope profile import BUNDLE KERNEL FILE [--target T] [--variant V]
                           [--gpu G] [--tool-version V] [--date D] [--json]
    irscope profile ls BUNDLE [KERNEL] [--target T] [--variant V] [--json]
    irscope profile rm BUNDLE ID

FILE is an Nsight Compute source export (``ncu -i R.ncu-rep --page source --csv
--print-source sass``), a ``.ncu-rep`` (read with ``ncu`` when it is on PATH) or a
Proton ``.hatchet`` from PC sampling. Which capture each launch belongs to, and the
SASS check that refuses another code's profile, are :mod:`irscope.core.profile_import`.
"""

from __future__ import annotations

import datetime
import json
import os

from irscope.cli.flags import TARGET_HELP, VARIANT_HELP
from irscope.errors import IrscopeError

#: Bytes read to tell a profile file's kind.
_HEAD_BYTES = 4096


def add_parser(sub) -> None:
    """Register the ``profile`` subcommand and its ``import``, ``ls`` and ``rm``."""
    p = sub.add_parser("profile", help="attach GPU profiles (Nsight Compute, Proton) to captures; list; remove",
                       description="Attach a GPU profile made elsewhere to a capture (capture on a laptop, "
                                   "profile on the GPU box, import), list the profiles of a bundle, remove one. "
                                   "`irscope hot` shows where the samples go.")
    ps = p.add_subparsers(dest="profile_command", metavar="{import,ls,rm}")
    ps.required = True
    imp = ps.add_parser(
        "import", help="attach a profile (ncu source CSV, .ncu-rep, Proton .hatchet) to a capture",
        description="Attach FILE's samples of KERNEL to its capture. FILE: an Nsight Compute source export "
                    "(ncu -i R.ncu-rep --page source --csv --print-source sass), a .ncu-rep (needs ncu on PATH) or "
                    "a Proton .hatchet (mode=\"pcsampling\"). Launches of other kernels are ignored. An ncu "
                    "launch is attached only to a capture whose SASS it is, instruction by instruction; launches "
                    "of the same code are merged. KERNEL by name (no --variant): each variant on the target gets "
                    "the launches that match it; by #ID or --variant: only that capture. No launch matches: one "
                    "line saying where the SASS differs, nothing attached. A Proton profile merges every launch "
                    "and variant of the kernel's name and goes to the capture named.")
    imp.add_argument("bundle", metavar="BUNDLE")
    imp.add_argument("kernel", metavar="KERNEL", help="kernel name (or a capture id like #3)")
    imp.add_argument("file", metavar="FILE", help="the profile: .csv (ncu source page), .ncu-rep or .hatchet")
    imp.add_argument("--target", metavar="T", help=TARGET_HELP)
    imp.add_argument("--variant", metavar="V", help=VARIANT_HELP)
    imp.add_argument("--gpu", metavar="NAME", help="the GPU profiled, where the file does not say (a CSV export)")
    imp.add_argument("--tool-version", metavar="V", help="the profiler's version, where the file does not say")
    imp.add_argument("--date", metavar="DATE",
                     help="when it was profiled (default: the file's modification time, UTC)")
    imp.add_argument("--json", action="store_true", help="a JSON list of the profiles attached")
    ls = ps.add_parser("ls", help="the profiles attached to a bundle's captures, with their stamps",
                       description="The profiles attached to BUNDLE's captures (KERNEL by name: each of its "
                                   "variants; by #ID or with --variant: that capture), with their stamps: tool, "
                                   "version, GPU, date, launches, samples.")
    ls.add_argument("bundle", metavar="BUNDLE")
    ls.add_argument("kernel", metavar="KERNEL", nargs="?", help="only this kernel (or capture id like #3)")
    ls.add_argument("--target", metavar="T", help="with KERNEL: " + TARGET_HELP)
    ls.add_argument("--variant", metavar="V", help="with KERNEL: " + VARIANT_HELP)
    ls.add_argument("--json", action="store_true",
                    help="a JSON list: id, capture_id, capture, tool, tool_version, gpu, date, launches, kernel, "
                         "source, created, notes, total_samples")
    rm = ps.add_parser("rm", help="remove one profile by its id (as `irscope profile ls` prints it)")
    rm.add_argument("bundle", metavar="BUNDLE")
    rm.add_argument("id", metavar="ID", help="the profile's id (3 or #3)")


def main(args) -> int:
    """Run ``irscope profile import|ls|rm``."""
    if args.profile_command == "import":
        return _import(args)
    if args.profile_command == "ls":
        return _ls(args)
    return _rm(args)


def _read_profile(path: str) -> tuple[str, str, str | None, str | None]:
    """(kind of text, text, gpu, tool version) of a profile file (a report becomes its
    source page's CSV); IrscopeError for a bad one."""
    from irscope.core.profile_import import ACCEPTED, NCU_CSV, NCU_REP, file_kind
    from irscope.profiles.ncu_source import decode_export

    if os.path.isdir(path):
        raise IrscopeError(f"{path} is a directory, not a profile ({ACCEPTED})")
    try:
        with open(path, "rb") as f:
            head = f.read(_HEAD_BYTES)
            kind = file_kind(os.path.basename(path), head)
            if not head:
                raise IrscopeError(f"{path}: an empty file, not a profile ({ACCEPTED})")
            if kind is None:
                raise IrscopeError(f"{path}: not a profile ({ACCEPTED})")
            if kind == NCU_REP:
                # Only a report needs ncu (a capture-side tool, imported when chosen).
                from irscope.capture.ncu_tool import export_report

                report = export_report(path)
                return NCU_CSV, report.source_csv, report.gpu, report.tool_version
            data = head + f.read()
    except FileNotFoundError:
        raise IrscopeError(f"{path}: no such file") from None
    except OSError as exc:
        raise IrscopeError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    text = decode_export(data)
    if text is None:
        raise IrscopeError(f"{path}: not a profile (neither UTF-8 nor UTF-16 text; {ACCEPTED})")
    return kind, text, None, None


def _file_date(path: str) -> str:
    """The file's modification time, UTC, ISO 8601 to the second."""
    stamp = datetime.datetime.fromtimestamp(os.path.getmtime(path), tz=datetime.timezone.utc)
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def _import(args) -> int:
    import irscope
    from irscope.core.profile_import import Stamps, import_planned, plan_import

    kind, text, gpu, version = _read_profile(args.file)
    notes: tuple[str, ...] = ()
    date = args.date
    if date is None:
        date = _file_date(args.file)
        notes = ("date: the imported file's modification time",)
    stamps = Stamps(gpu=args.gpu or gpu, tool_version=args.tool_version or version, date=date, notes=notes)
    with irscope.open(args.bundle) as bundle:
        planned = plan_import(bundle, args.kernel, args.target, args.variant, kind=kind, text=text,
                              source=os.path.basename(args.file), stamps=stamps)
    ids = import_planned(args.bundle, planned)
    if args.json:
        print(json.dumps([{"id": pid, "capture_id": p.capture_id, "capture": p.title,
                           "tool": p.profile.tool, "launches": p.profile.launches,
                           "total_samples": p.profile.total_samples, "notes": list(p.profile.notes)}
                          for pid, p in zip(ids, planned)], indent=2))
        return 0
    for pid, p in zip(ids, planned):
        prof = p.profile
        print(f"profile #{pid} attached to capture #{p.capture_id} {p.title}: {prof.tool}"
              f"{' ' + prof.tool_version if prof.tool_version else ''}, {prof.launches} launch"
              f"{'es' if prof.launches != 1 else ''}, {prof.total_samples} samples")
        for note in prof.notes:
            print(f"  note: {note}")
    return 0


def _ls(args) -> int:
    import irscope
    from irscope.core.profile import profiles_of
    from irscope.core.target import target_key

    rows = []
    with irscope.open(args.bundle) as bundle:
        if args.kernel is not None:
            chosen = bundle.capture(args.kernel, args.target, args.variant)
            caps = [chosen]
            if args.variant is None and not args.kernel.lstrip("#").isdigit():
                # A kernel by name: every variant's profiles (on the target, when given).
                key = target_key(chosen.target)
                caps = [c for c in bundle.captures(chosen.kernel)
                        if args.target is None or target_key(c.target) == key]
        elif args.target or args.variant:
            raise IrscopeError("--target and --variant need a KERNEL")
        else:
            caps = bundle.captures()
        for cap in caps:
            for stamp in profiles_of(cap):
                rows.append((cap.id, cap.title(), stamp))
    if args.json:
        print(json.dumps([{"capture_id": cid, "capture": title} | stamp.to_json() for cid, title, stamp in rows],
                         indent=2))
        return 0
    if not rows:
        print("no profiles; attach one with `irscope profile import BUNDLE KERNEL FILE` "
              "or capture with `irscope run --profile`")
        return 0
    for cid, title, stamp in rows:
        print(f"{stamp.label()}  capture #{cid} {title}")
    return 0


def _rm(args) -> int:
    from irscope.core.profile import PROFILE_KIND
    from irscope.store.attachments import attachments, remove_attachment
    from irscope.store.bundle import Bundle as StoreBundle

    text = str(args.id).lstrip("#")
    if not text.isdigit():
        raise IrscopeError(f"profile id {args.id!r} is not a number (see `irscope profile ls {args.bundle}`)")
    pid = int(text)
    if not os.path.exists(args.bundle):
        raise IrscopeError(f"{args.bundle}: no such bundle")
    store = StoreBundle.open(args.bundle, create=True)
    try:
        if not any(r.id == pid for r in attachments(store, kind=PROFILE_KIND)):
            raise IrscopeError(f"no profile #{pid} in {args.bundle} (see `irscope profile ls {args.bundle}`)")
        remove_attachment(store, pid)
    finally:
        store.close()
    print(f"profile #{pid} removed")
    return 0
