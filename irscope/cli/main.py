"""``irscope`` command line: argument parsing and the one-line error contract."""

from __future__ import annotations

import argparse
import lzma
import sqlite3
import sys

from irscope import __version__
from irscope.compiler.stages import TTGIR
from irscope.errors import IrscopeError

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors in one line (and exits 2)."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"irscope: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="irscope", description="See what the Triton compiler does to your kernel.")
    p.add_argument("--version", action="version", version=f"irscope {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def capture_flags(sp):
        sp.add_argument("-o", "--output", metavar="BUNDLE", help="bundle file to write or add to")
        sp.add_argument("--target", action="append", default=[], metavar="T",
                        help="compile-only for this target (sm_90, sm_80, gfx942...); repeatable")
        sp.add_argument("--llvm-passes", action="store_true", help="also keep every per-pass LLVM IR snapshot (~6x compile time)")
        sp.add_argument("--exact-links", action="store_true",
                        help="compile each kernel a second time with USE_IR_LOC=ttgir, so LLIR/PTX tie to single TTGIR ops")
        sp.add_argument("--no-remarks", dest="remarks", action="store_false",
                        help="do not record Triton's remarks (MLIR_ENABLE_DIAGNOSTICS=remarks, Triton 3.6+)")
        sp.add_argument("--python", metavar="PATH", help="interpreter to run under (e.g. a venv with another Triton)")
        sp.add_argument("--json", action="store_true", help="print the captures as JSON instead of a table")
        sp.add_argument("-q", "--quiet", action="store_true", help="no progress, no script output")
        sp.add_argument("--no-open", action="store_true",
                        help="do not open the bundle in the viewer at the end (it opens only when stdout is a terminal)")

    run = sub.add_parser("run", help="run a script and capture every kernel it compiles",
                         description="Run SCRIPT with Triton's dump switches on and keep every kernel it compiles. "
                                     "Arguments after '--' go to the script.")
    run.add_argument("script", metavar="SCRIPT")
    capture_flags(run)
    run.add_argument("--strict", action="store_true", help="exit non-zero when a compile-only run skips the script's result check (it reads tensor values)")
    run.add_argument("--profile", action="store_true",
                     help="GPU only: then run the script again under a profiler (Nsight Compute's ncu when on PATH, "
                          "else Proton's PC sampling) and attach each kernel's samples to its capture")
    run.add_argument("--profile-launches", type=int, default=10, metavar="N",
                     help="with --profile and ncu: profile the first N launches of the captured kernels (default 10)")
    run.add_argument("--profiler", choices=("auto", "ncu", "proton"), default="auto",
                     help="with --profile: the profiler (default auto: ncu when on PATH, else Proton)")
    run.add_argument("--keep-profile", metavar="DIR",
                     help="with --profile: also keep the profiler's own file (.ncu-rep report or .hatchet) in DIR")

    comp = sub.add_parser("compile", help="compile one kernel with no driver script",
                          description="Compile FILE::KERNEL for the given targets and capture it.")
    comp.add_argument("spec", metavar="FILE::KERNEL")
    comp.add_argument("--signature", default="", metavar="SIG",
                      help="runtime argument types, e.g. 'x_ptr:*fp32,n:i32' or positional '*fp32,*fp32,i32'; "
                           "':16' marks an argument divisible by 16 (pointers are by default)")
    comp.add_argument("--constexpr", action="append", default=[], metavar="NAME=VALUE")
    comp.add_argument("--num-warps", type=int)
    comp.add_argument("--num-stages", type=int)
    capture_flags(comp)

    ls = sub.add_parser("ls", help="list the captures in a bundle")
    ls.add_argument("bundle", metavar="BUNDLE")
    ls.add_argument("--json", action="store_true", help="a JSON list, one object per capture")
    ls.add_argument("--runs", action="store_true", help="list the capture runs (provenance) instead")

    from irscope.cli.flags import add_selection as selection

    cat = sub.add_parser("cat", help="print one stage or pass snapshot of a kernel")
    selection(cat)
    cat.add_argument("--stage", default=TTGIR, help="ttir, ttgir, llir, ptx, amdgcn, sass, source, json, log (default ttgir)")
    cat.add_argument("--pass", dest="pass_index", type=int, metavar="N", help="the N-th per-pass snapshot instead (0-based)")
    cat.add_argument("-o", "--output", metavar="FILE",
                     help="write it to FILE (replaced whole, never half-written) instead of stdout; "
                          "how to get a binary stage (cubin) from a terminal")

    ps = sub.add_parser("passes", help="what each compiler pass changed (op counts per pass)")
    selection(ps)
    ps.add_argument("--json", action="store_true", help="a JSON list, one object per pass")
    ps.add_argument("--stage", metavar="S", help="only the passes of this stage (ttir, ttgir, llir, ptx)")
    ps.add_argument("--changed", action="store_true", help="only the passes that changed the IR")
    ps.add_argument("--origins", action="store_true",
                    help="instead: each op of the final TTIR/TTGIR (and LLVM IR, with --llvm-passes) with "
                         "the pass that made it, and the ops passes erased")
    ps.add_argument("--ablate", action="store_true",
                    help="instead: replay the kernel from its TTIR once without each pass of its TTGIR pipeline "
                         "and rank the passes by effect (compiles; the replays go to a side bundle)")
    ps.add_argument("--jobs", type=int, metavar="N", help="with --ablate: replays at a time (default 1)")
    ps.add_argument("--without-pass", action="append", default=[], metavar="NAME",
                    help="with --ablate: also a replay without this pass (TTGIR or LLVM lowering); repeatable")
    ps.add_argument("-o", "--output", metavar="BUNDLE",
                    help="with --ablate: the bundle for the replays (default: BUNDLE's stem + .ablate.irscope)")
    ps.add_argument("--skip-unchanged", action="store_true",
                    help="with --ablate: do not replay the passes that changed nothing in the original compile "
                         "(their row is the control replay's: leaving them out cannot change the IR); faster")

    sh = sub.add_parser("show", help="the ops of every stage that come from one Python line")
    selection(sh, kernel_optional=True)
    sh.add_argument("--line", type=int, required=True, metavar="N", help="line of the kernel's file")
    sh.add_argument("--call-sites", action="store_true",
                    help="also the ops inlined from a helper called at that line (by default an op belongs "
                         "only to the line of its innermost user frame)")
    sh.add_argument("--all", action="store_true",
                    help="every op of every stage, lines in full (by default: a count per stage and op name, "
                         "then the first ops of each stage, long lines cut)")
    sh.add_argument("--json", action="store_true", help="a JSON object: line, source, stages (always complete)")

    lk = sub.add_parser("links", help="what one op became (or came from) in every other stage")
    selection(lk, kernel_optional=True)
    lk.add_argument("--stage", default=TTGIR, help="stage of the op: ttir, ttgir, llir, ptx, amdgcn, sass (default ttgir)")
    lk.add_argument("--op-line", type=int, required=True, metavar="N", help="line of the op in that stage's text")
    lk.add_argument("--json", action="store_true", help="a JSON object: stage, line, text, links")

    import importlib

    for name, module in _VIEW_COMMANDS.items():
        importlib.import_module(_PARSER_MODULES.get(name, module)).add_parser(sub)
    return p


# Commands whose arguments are declared apart from their (heavy) module.
_PARSER_MODULES = {"diff": "irscope.cli.diff_args"}

# Commands that live in their own module: each has ``add_parser(sub)`` and
# ``main(args) -> int``.  Only the chosen one's heavy imports run (inside main).
_VIEW_COMMANDS = {
    "diff": "irscope.cli.diff_cmd",
    "open": "irscope.cli.open_cmd",
    "export": "irscope.cli.export_cmd",
    "layout": "irscope.cli.layout_cmd",
    "report": "irscope.cli.report_cmd",
    "explain": "irscope.cli.explain_cmd",
    "check": "irscope.cli.check_cmd",
    "hot": "irscope.cli.hot_cmd",
    "profile": "irscope.cli.profile_cmd",
    "tune": "irscope.cli.tune_cmd",
    "replay": "irscope.cli.replay_cmd",
    "repro": "irscope.cli.repro_cmd",
}


def _one_line(text: str) -> str:
    """The error contract is one line: any newline in a message becomes a space."""
    return " ".join(text.split()) if "\n" in text or "\r" in text else text


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``irscope`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = ["irscope", *argv]
    script_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1 :]
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        if args.command in ("run", "compile"):
            from irscope.cli import run_cmd

            return run_cmd.main(args, script_args, command)
        if args.command in ("passes", "show"):
            from irscope.cli import analyze_cmd

            return analyze_cmd.main(args)
        if args.command in _VIEW_COMMANDS:
            import importlib

            return importlib.import_module(_VIEW_COMMANDS[args.command]).main(args)
        if args.command == "links":
            from irscope.cli import links_cmd

            return links_cmd.main(args)
        from irscope.cli import inspect_cmd

        return inspect_cmd.main(args)
    except IrscopeError as exc:
        print(f"irscope: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except (sqlite3.DatabaseError, lzma.LZMAError) as exc:  # a read the store did not guard
        where = getattr(args, "bundle", None) or getattr(args, "output", None) or "bundle"
        print(f"irscope: error: {where}: damaged bundle ({_one_line(str(exc))})", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("irscope: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
