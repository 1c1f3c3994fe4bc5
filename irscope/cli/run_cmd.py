"""``irscope run`` and ``irscope compile``: capture into a bundle, with progress."""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
from dataclasses import dataclass

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

import irscope
from irscope.capture.session import CHILD_DIR, CaptureRequest, run_capture, run_info, signal_name
from irscope.core.target import normalise_target
from irscope.cli.render import capture_table, human_bytes, stdout_console
from irscope.errors import IrscopeError
from irscope.store.bundle import Bundle

EXIT_SCRIPT_FAILED = 3
EXIT_COMPILE_FAILED = 4
EXIT_NOTHING = 5
EXIT_INTERRUPTED = 130


def main(args, script_args: list[str], command: list[str]) -> int:
    targets = list(dict.fromkeys(normalise_target(t) for t in args.target))
    if args.command == "compile":
        return _compile(args, targets, command)
    if not os.path.exists(args.script):
        raise IrscopeError(f"{args.script}: no such script")
    output = args.output or os.path.splitext(os.path.basename(args.script))[0] + ".irscope"
    req = CaptureRequest(args.script, script_args, args.python, targets, args.llvm_passes, args.exact_links,
                         remarks=args.remarks)
    if getattr(args, "profile", False):
        from irscope.cli.run_profile import capture_and_profile

        return capture_and_profile(req, output, command, args)
    return capture_into(req, output, command, args)


def _compile(args, targets: list[str], command: list[str]) -> int:
    path, sep, kernel = args.spec.rpartition("::")
    if not sep or not path or not kernel:
        raise IrscopeError(f"{args.spec!r}: expected FILE::KERNEL, e.g. kernels.py::add_kernel")
    if not os.path.isfile(path):
        raise IrscopeError(f"{path}: no such file")
    defined = top_level_names(path)
    if defined is not None and kernel not in defined:
        # Said before any run begins: a misspelt name adds no empty run to the bundle.
        raise IrscopeError(f"{path} has no kernel named {kernel!r}" + _close_names(kernel, defined))
    types, divisible = parse_signature(args.signature)
    constexprs = {}
    for item in args.constexpr:
        name, eq, value = item.partition("=")
        if not eq or not name:
            raise IrscopeError(f"--constexpr {item!r}: expected NAME=VALUE")
        constexprs[name.strip()] = value.strip()
    spec = {
        "file": os.path.abspath(path),
        "kernel": kernel,
        "signature": types,
        "divisible": divisible,
        "constexprs": constexprs,
        "options": {"num_warps": args.num_warps, "num_stages": args.num_stages},
    }
    output = args.output or os.path.splitext(os.path.basename(path))[0] + ".irscope"
    with tempfile.TemporaryDirectory(prefix="irscope-compile-") as tmp:
        spec_path = os.path.join(tmp, "spec.json")
        with open(spec_path, "w") as f:
            json.dump(spec, f)
        script = os.path.join(CHILD_DIR, "irscope_compile_kernel.py")
        req = CaptureRequest(script, [spec_path], args.python, targets or ["sm_90"], args.llvm_passes, args.exact_links,
                             remarks=args.remarks)
        return capture_into(req, output, command, args, strict=True, noun="compile")


def top_level_names(path: str) -> set[str] | None:
    """The names a Python file defines at its top level (functions, classes,
    assignments, imports, in ``if``/``try`` blocks too), read without running it; None
    when that cannot tell (a syntax error, ``from x import *``, unreadable): the
    child then looks the name up itself."""
    import ast

    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), filename=path)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    names: set[str] = set()
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(a.name == "*" for a in node.names):
                return None
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        else:  # if / try / with / for blocks at the top level define names too
            for field in ("body", "orelse", "finalbody", "handlers"):
                todo.extend(getattr(node, field, None) or [])
    return names


def _close_names(name: str, defined: set[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, sorted(defined), n=3)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def parse_signature(text: str) -> tuple[dict[str, str], list[str]]:
    """``'x_ptr:*fp32,n:i32:16'`` -> ({name: type}, [names divisible by 16]).

    Positional ``'*fp32,i32'`` gives names ``#0, #1`` that the child maps to the
    kernel's runtime parameters in order. Pointers are taken as 16-byte aligned
    (as torch allocations are) unless written ``:1``.
    """
    types: dict[str, str] = {}
    divisible: list[str] = []
    for i, item in enumerate(p.strip() for p in text.split(",") if p.strip()):
        parts = item.split(":")
        if _is_type(parts[0]):
            name, ty, rest = f"#{i}", parts[0], parts[1:]
        elif len(parts) >= 2 and _is_type(parts[1]):
            name, ty, rest = parts[0], parts[1], parts[2:]
        else:
            raise IrscopeError(f"--signature item {item!r}: expected NAME:TYPE[:16] with TYPE like *fp32, i32, fp16")
        if rest and rest != ["16"] and rest != ["1"]:
            raise IrscopeError(f"--signature item {item!r}: only ':16' (divisible) or ':1' (not) may follow the type")
        types[name] = ty
        if rest == ["16"] or (ty.startswith("*") and not rest):
            divisible.append(name)
    return types, divisible


_SCALARS = {"i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64", "fp8e4nv", "fp8e5", "fp16", "bf16", "fp32", "fp64"}


def _is_type(word: str) -> bool:
    return word.startswith("*") and word[1:].lstrip("k") in _SCALARS or word in _SCALARS


def capture_into(req: CaptureRequest, output: str, command: list[str], args, strict: bool = False,
                 noun: str = "script", stored_ids: list[int] | None = None, print_json: bool = True) -> int:
    """Run the capture, storing each kernel in ``output`` as it arrives.

    ``noun`` is what the one-line errors call the child's work: the ``script`` of
    ``irscope run``, the ``compile`` of ``irscope compile``. ``stored_ids``, when
    given, receives the ids of the captures added (``run --profile`` profiles them).
    ``print_json`` False: with ``--json``, print nothing on stdout (``run --profile``
    prints the captures once their profiles are attached)."""
    console = Console(stderr=True, soft_wrap=True)
    quiet = getattr(args, "quiet", False) or getattr(args, "json", False)
    strict = strict or getattr(args, "strict", False)
    info = run_info(req, command)
    existed = os.path.exists(output)
    bundle = Bundle.open(output, create=True)
    run_id = bundle.begin_run(info)
    stored: list[int] = [] if stored_ids is None else stored_ids
    captured = 0
    # Only a terminal gets the spinner (a stopped live display leaves a blank line).
    progress = Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), TimeElapsedColumn(),
                        console=console,
                        transient=True, disable=quiet or not console.is_terminal)

    def on_capture(kernel):
        nonlocal captured
        stored.append(bundle.add_capture(run_id, kernel))
        captured += 1
        last = f"{kernel.kernel} [{kernel.variant}] {kernel.target}"
        progress.update(task, description=f"capturing: {captured} kernel(s), last {last}")

    def on_driver(report):
        if report.get("hash"):
            bundle.set_driver_resources(run_id, report["hash"], report.get("n_regs"), report.get("n_spills"))

    def on_refused(report):
        if report.get("hash"):
            error, detail, note = refusal_text(report)
            bundle.set_launch_refused(run_id, report["hash"], error, detail, note)

    def on_output(line):
        if not quiet:
            progress.console.print(line, markup=False, highlight=False, soft_wrap=True)

    outcomes = []
    interrupted = False
    verdict = Verdict(None, "ok", True)
    try:
        with progress:
            task = progress.add_task(f"running {os.path.basename(req.script)}", total=None)
            outcomes = run_capture(req, on_capture, on_driver, on_output, on_refused=on_refused)
        interrupted = any(o.interrupted for o in outcomes)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        verdict = judge(outcomes, interrupted, noun, strict, python=req.python)
        mode, run_targets = resolved_mode(outcomes)
        if not (verdict.discard and not stored and bundle.discard_run(run_id)):
            bundle.finish_run(run_id, complete=verdict.complete, status=verdict.status, error=verdict.problem,
                              mode=mode, targets=run_targets)
    bundle.close()
    rows = []
    details: dict[int, str | None] = {}
    if stored:
        with irscope.open(output) as view:
            rows = [c for c in view.captures() if c.id in set(stored)]
            details = {c.id: c.info.get("error_detail") for c in rows if c.error}
    output_exists = True
    if not stored and not existed:
        os.remove(output)  # nothing captured into a bundle we created: leave no empty file
        output_exists = False

    if args.json:
        if print_json:
            print(json.dumps([r.to_json() for r in rows], indent=2))
    elif rows:
        stdout_console().print(capture_table(rows))
    for c in rows:
        if c.error and not interrupted:
            _print_detail(console, c, details.get(c.id))
    for note in dict.fromkeys(n for r in rows for n in r.notes):
        console.print(Text.assemble(("note: ", "yellow"), note), highlight=False)
    if output_exists and not (verdict.discard and not stored):  # a discarded run: the error line says all
        size = os.path.getsize(output)
        console.print(Text(f"bundle: {output} ({human_bytes(size)}, {len(rows)} capture(s) added)"), highlight=False)
    code = _exit_code(verdict, rows, console)
    if rows and _should_open(args):
        from irscope.cli.open_cmd import open_after_capture

        open_after_capture(output)
    return code


def refusal_text(report: dict) -> tuple[str, str, str | None]:
    """(error, detail, note) for a launch Triton refused: the one line, the whole
    message, and whether the autotuner pruned it (the script went on)."""
    message = str(report.get("message") or "").strip()
    first = message.splitlines()[0] if message else ""
    error = f"Triton refused to launch it: {report.get('type') or 'OutOfResources'}: {first}"[:400]
    note = None
    if report.get("benchmarking"):
        note = ("an autotune config Triton refused to launch (out of resources on the target's device): the "
                "autotuner skipped it, as it would on that GPU")
    return error, error + ("\n\n" + message if message != first else "") + "\n", note


def resolved_mode(outcomes) -> tuple[str | None, list[str] | None]:
    """The run's mode and targets as its children found them (``gpu`` or
    ``compile-only``, and ``sm_90``...), for a run started as ``auto``; None where
    the children did not say."""
    modes = list(dict.fromkeys(o.mode for o in outcomes if o.mode))
    targets = list(dict.fromkeys(o.target or o.device_target for o in outcomes if o.target or o.device_target))
    return (modes[0] if len(modes) == 1 else None), (targets or None)


def _should_open(args) -> bool:
    """Open the viewer at the end only for a person at a terminal: never with
    ``--no-open``, nor when stdout (or stdin, which the app reads keys from) is not one."""
    if getattr(args, "no_open", False):
        return False
    return sys.stdout.isatty() and sys.stdin.isatty()


DETAIL_LINES = 30


def _print_detail(console, cap, detail: str | None) -> None:
    """A failed capture's error as the compiler gave it, under the table (no
    traceback: that, and Triton's reproducer, are in the bundle)."""
    text = (detail or cap.error or "").split("\nTraceback (most recent call last):", 1)[0].strip()
    if not text:
        return
    lines = text.splitlines()
    shown = lines[:DETAIL_LINES]
    if len(lines) > DETAIL_LINES:
        shown.append(f"... ({len(lines) - DETAIL_LINES} more lines)")
    console.print(Text.assemble((f"#{cap.id} {cap.kernel} [{cap.variant}] {cap.target} failed:", "red"),
                                f" (all of it: irscope cat BUNDLE '#{cap.id}' --stage error)"), highlight=False)
    console.print(Text("\n".join("    " + ln for ln in shown)), highlight=False)


@dataclass(slots=True)
class Verdict:
    """How a capture run ended, as the bundle records it and the exit code says."""

    problem: str | None  # the one line (None: nothing to say)
    status: str  # runs.status: ok, failed, interrupted, killed (SIGKILL), crashed (SIGABRT), ...
    complete: bool  # the script (compile) ran to its end
    fatal: bool = False  # a non-zero exit even with kernels captured
    note: str | None = None  # an expected outcome, said once
    exit_code: int = 0
    discard: bool = False  # a run that did nothing (a compile spec that misfits the kernel): not recorded


def judge(outcomes, interrupted: bool, noun: str = "script", strict: bool = False, python: str | None = None) -> Verdict:
    """The run's verdict from its children's outcomes."""
    if interrupted:
        return Verdict("interrupted: the run was stopped; every kernel finished before is kept", "interrupted", False,
                       True, exit_code=EXIT_INTERRUPTED)
    for o in outcomes:
        label = _label(o)
        at = f" ({label})" if label else ""
        err = o.script_error
        if o.exit_code == 4 and not o.signal or (err and err.get("kind") == "no-triton"):
            text = f"no Triton in that interpreter: {err.get('type')}: {err.get('message')}" if err else "no Triton in that interpreter"
            return Verdict(text, "failed", True, True, exit_code=EXIT_SCRIPT_FAILED)
        if o.signal is not None:
            name = signal_name(o.signal)
            if o.signal == signal.SIGKILL:
                text = f"the {noun} was killed by SIGKILL{at} (what an out-of-memory kill looks like)"
                status = f"killed ({name})"
            elif o.signal in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                text, status = f"the {noun} was terminated by {name}{at}", f"killed ({name})"
            else:
                text, status = f"the {noun} crashed with {name}{at}", f"crashed ({name})"
            if o.recovered:
                text += f"; the kernel it was compiling is kept as a failed capture"
            return Verdict(text, status, False, True, exit_code=EXIT_SCRIPT_FAILED)
        if err and err.get("type") == "CompileSpecError":  # irscope compile: the spec misfits the kernel
            return Verdict(str(err.get("message")), "failed", True, True, exit_code=EXIT_SCRIPT_FAILED,
                           discard=True)
        if err:
            # (irscope compile: the frame is irscope's own helper, not the user's file)
            where = f" at {err['where']}" if err.get("where") and noun == "script" else ""
            what = f"{err.get('type')}: {err.get('message')}"
            lead = "script failed" if noun == "script" else f"the {noun} failed"
            if err.get("type") == "OutOfResources":  # the target's GPU would refuse the launch too
                return Verdict(f"{lead}{where}{at}: Triton refused to launch a kernel: {what}", "failed",
                               True, True, exit_code=EXIT_COMPILE_FAILED)
            if err.get("kind") == "data-dependent" and o.mode == "compile-only" and not o.captured:
                # Not a check of results: nothing had run yet.
                return Verdict(f"{lead}{where}{at} before launching any kernel: {what} (it reads tensor "
                               f"values, which compile-only mode does not compute)", "failed", True, True,
                               exit_code=EXIT_SCRIPT_FAILED)
            if err.get("kind") == "data-dependent" and o.mode == "compile-only" and not strict:
                note = (f"compile-only ({o.target or 'sm_90'}): the {noun}'s result check{where} was skipped, "
                        f"as the tensors hold no values without a GPU (--strict makes it an error)")
                return Verdict(None, "compile-only, checks skipped", True, False, note=note)
            detail = f"{err.get('type')}: {err.get('message')}"
            if "Cannot access accelerator device" in str(err.get("message")) and o.mode == "compile-only":
                detail += " (autograd needs the CUDA device guard irscope gives a torch built without CUDA; it could not be loaded)"
            if err.get("kind") == "data-dependent":
                detail = "it reads tensor values, which compile-only mode does not compute"
            text = f"the {noun} failed{where}{at}: {detail}" if noun != "script" else f"script failed{where}{at}: {detail}"
            # A script that raised is a failure, whatever the mode: exit 3 and a `failed` run,
            # every kernel captured before it kept. Only a compile-only result check (above) is not.
            return Verdict(text, "failed", True, True, exit_code=EXIT_SCRIPT_FAILED)
        if o.exit_code not in (0, None):
            return Verdict(f"the {noun} exited with code {o.exit_code}{at}", "failed", True, True,
                           exit_code=EXIT_SCRIPT_FAILED)
        if not o.hook_ran:
            exe = python or "the interpreter"
            return Verdict(f"{exe} ran no {noun}: irscope's hook in it never reported (is it a Python interpreter "
                           f"with Triton?)", "nothing captured", True, True, exit_code=EXIT_NOTHING)
    if outcomes and not any(o.captured for o in outcomes):
        what = "the script compiled no Triton kernel" if noun == "script" else "the compile produced no kernel"
        return Verdict(f"nothing captured: {what}", "nothing captured", True, True, exit_code=EXIT_NOTHING)
    read = next((o for o in outcomes if o.placeholder_reads), None)
    if read is not None:
        # Compile-only: the script read tensor values after its first compile (a check of
        # results), got placeholders and went on; every later kernel was captured.
        where = f" at {read.placeholder_first}" if read.placeholder_first else ""
        label = f"compile-only ({read.target or read.device_target or 'sm_90'})"
        more = f" ({read.placeholder_reads} value reads)" if read.placeholder_reads > 1 else ""
        if strict:
            return Verdict(f"script read tensor values{where} ({label}), which compile-only mode does not compute",
                           "failed", True, True, exit_code=EXIT_SCRIPT_FAILED)
        note = (f"{label}: the {noun}'s result check{where} read tensor values{more}, which hold placeholders "
                f"without a GPU (a check passes, a number is 1); the {noun} went on, and kernels compiled after it "
                f"carry a note (--strict makes it an error)")
        return Verdict(None, "compile-only, checks skipped", True, False, note=note)
    crashed = next((o for o in outcomes if o.shutdown_signal), None)
    if crashed is not None:
        at = f" ({_label(crashed)})" if _label(crashed) else ""
        note = (f"the {noun} ran to its end{at}, then Python crashed with {signal_name(crashed.shutdown_signal)} "
                f"while shutting down (a native thread left running by a library, such as torch's autograd "
                f"thread); nothing is lost")
        return Verdict(None, "ok", True, note=note)
    return Verdict(None, "ok", True)


def _label(outcome) -> str | None:
    if outcome.target:
        return outcome.target
    if outcome.mode == "compile-only":
        return "compile-only, sm_90"
    return "gpu" if outcome.mode == "gpu" else None  # mode unknown: the child never reported


def _exit_code(verdict: Verdict, rows, console) -> int:
    refused = [r for r in rows if r.error and r.failed_stage == "launch"]
    failed = [r for r in rows if r.error and r.failed_stage != "launch"]
    if verdict.exit_code == EXIT_INTERRUPTED:
        console.print(Text(f"irscope: {verdict.problem}"), highlight=False)
        return EXIT_INTERRUPTED
    if verdict.fatal and verdict.status.startswith("killed"):
        _error_line(verdict.problem or verdict.status, rows)
        return verdict.exit_code
    if refused and verdict.exit_code == EXIT_COMPILE_FAILED and not failed:
        # The script ended on a launch Triton refused (an autotuner's pruned configs do not end it).
        r = refused[0]
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        print(f"irscope: error: {r.kernel} [{r.variant}] {r.target}: {r.error}{more}; the compiled stages are kept",
              file=sys.stderr)
        return EXIT_COMPILE_FAILED
    if failed:
        r = failed[0]
        where = f" in pass {r.failed_pass}" if r.failed_pass else (f" in {r.failed_stage}" if r.failed_stage else "")
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        print(f"irscope: error: {r.kernel} [{r.variant}] {r.target} failed to compile{where}: {r.error}{more}; "
              f"the stages that compiled are kept", file=sys.stderr)
        return EXIT_COMPILE_FAILED
    if verdict.note:
        console.print(Text(f"{verdict.note}; {len(rows)} kernel(s) captured"), highlight=False)
    if verdict.problem is None:
        return 0
    if rows and not verdict.fatal:
        console.print(Text.assemble(("note: ", "yellow"), f"{verdict.problem}; {len(rows)} kernel(s) captured"),
                      highlight=False)
        return 0
    _error_line(verdict.problem, rows)
    return verdict.exit_code or EXIT_SCRIPT_FAILED


def _error_line(problem: str, rows) -> None:
    print(f"irscope: error: {problem}" + (f"; {len(rows)} kernel(s) captured" if rows else ""), file=sys.stderr)
