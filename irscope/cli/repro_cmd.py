"""``irscope repro BUNDLE KERNEL [--target T] [--variant V] -o repro.py``: a standalone
script that compiles the captured kernel again (irscope/whatif/repro.py says what it
holds). The script is written atomically; a note on stderr says what the capture could
not give it (a helper's source, the launch's shapes)."""

from __future__ import annotations

import sys

from irscope.errors import IrscopeError


def add_parser(sub) -> None:
    """Declare ``irscope repro``."""
    from irscope.cli.flags import TARGET_HELP, VARIANT_HELP

    rp = sub.add_parser("repro", help="write a standalone script that compiles (or launches) a captured kernel",
                        description="Write one Python script that compiles the captured kernel with the same source "
                                    "(and helpers), signature, specialisation, constexprs, options and target. "
                                    "With a GPU it launches the kernel on random inputs; with none (or under "
                                    "'irscope run' with no GPU) it compiles for the captured target.")
    rp.add_argument("bundle", metavar="BUNDLE")
    rp.add_argument("kernel", metavar="KERNEL", help="kernel name (or a capture id like #3)")
    rp.add_argument("--target", metavar="T",
                    help=TARGET_HELP + "; a target the kernel has no capture for compiles its first capture for T")
    rp.add_argument("--variant", metavar="V", help=VARIANT_HELP)
    rp.add_argument("-o", "--output", metavar="FILE", required=True, help="the script to write (replaced whole)")
    rp.add_argument("--check", action="store_true",
                    help="then run it under 'irscope run' (no GPU) and compare its capture with the original: "
                         "TTIR, TTGIR, LLVM IR and PTX up to locations, registers, spills, shared (exit 1 if they differ)")
    rp.add_argument("--python", metavar="PY", help="with --check: the interpreter to run it with (its Triton compiles)")


def _pick(bundle, args):
    """The capture to reproduce, and the target to compile for when it differs from the
    capture's (``--target`` naming a target the kernel was never captured for)."""
    from irscope.cli.flags import select
    from irscope.core.target import Target

    if args.target is None:
        return select(bundle, args), None
    target = Target.parse(args.target).name
    try:
        return select(bundle, args), None
    except IrscopeError:
        caps = [c for c in bundle.captures() if c.kernel == args.kernel or f"#{c.id}" == args.kernel]
        if not caps or any(Target.parse(c.target).name == target for c in caps):
            raise
    return bundle.capture(args.kernel, None, args.variant), target


def main(args) -> int:
    """Write the reproducer; 0 on success (IrscopeError for the one-line contract)."""
    import irscope
    from irscope.cli.inspect_cmd import write_atomic
    from irscope.whatif.compile_spec import spec_of
    from irscope.whatif.repro import repro_script

    bundle = irscope.open(args.bundle)
    cap, retarget = _pick(bundle, args)
    if retarget is not None:
        if args.check:
            raise IrscopeError(f"--check compares with a capture for the same target: {cap.kernel} has none for "
                               f"{retarget}")
        print(f"irscope: {cap.kernel} has no {retarget} capture: the script compiles capture #{cap.id} "
              f"({cap.target}) for {retarget}", file=sys.stderr)
    if cap.failed and not cap.source.text:
        raise IrscopeError(f"capture #{cap.id} ({cap.kernel}) failed and holds no source to reproduce")
    spec = spec_of(cap)
    if retarget is not None:
        spec = spec.with_changes(target=retarget)
    write_atomic(args.output, repro_script(spec, args.bundle))
    for note in spec.notes:
        print(f"irscope: note: {note}", file=sys.stderr)
    print(f"wrote {args.output}: {spec.kernel} for {spec.target} (capture #{cap.id}); "
          f"run it with 'python {args.output}' or 'irscope run {args.output}'")
    return _check(cap, args) if args.check else 0


def _check(cap, args) -> int:
    """Run the written script and say whether it gives the captured compile."""
    import os
    import tempfile

    from irscope.whatif.repro import round_trip

    python = args.python
    if python is None:  # the interpreter that made the capture, when it is on this machine: the same Triton
        made_by = cap.run.python_executable
        python = made_by if made_by and os.path.exists(made_by) else None
    with tempfile.TemporaryDirectory(prefix="irscope-repro-") as tmp:
        got = round_trip(cap, args.output, os.path.join(tmp, "check.irscope"), python=python)
    if got.error is not None:
        raise IrscopeError(got.error)
    if got.same:
        r = cap.resources
        print(f"check: the same compile as capture #{cap.id} (ttir, ttgir, llir, ptx up to locations; "
              f"registers {r.registers}, spills {r.spills}, shared {r.shared})")
        return 0
    print(f"check: differs from capture #{cap.id}:")
    for d in got.differences:
        print(f"  {d}")
    return 1
