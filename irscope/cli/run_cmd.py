"""``irscope run`` and ``irscope compile``: capture into a bundle, with progress."""

from __future__ import annotations

import json
import os
import sys
import tempfile

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

import irscope
from irscope.capture.session import CHILD_DIR, CaptureRequest, normalise_target, run_capture, run_info
from irscope.cli.render import capture_table, human_bytes, stdout_console
from irscope.errors import IrscopeError
from irscope.store.bundle import Bundle

EXIT_SCRIPT_FAILED = 3
EXIT_COMPILE_FAILED = 4
EXIT_INTERRUPTED = 130


def main(args, script_args: list[str], command: list[str]) -> int:
    targets = list(dict.fromkeys(normalise_target(t) for t in args.target))
    if args.command == "compile":
        return _compile(args, targets, command)
    if not os.path.exists(args.script):
        raise IrscopeError(f"{args.script}: no such script")
    output = args.output or os.path.splitext(os.path.basename(args.script))[0] + ".irscope"
    req = CaptureRequest(args.script, script_args, args.python, targets, args.llvm_passes, args.exact_links)
    return capture_into(req, output, command, args)


def _compile(args, targets: list[str], command: list[str]) -> int:
    path, sep, kernel = args.spec.rpartition("::")
    if not sep or not path or not kernel:
        raise IrscopeError(f"{args.spec!r}: expected FILE::KERNEL, e.g. kernels.py::add_kernel")
    if not os.path.isfile(path):
        raise IrscopeError(f"{path}: no such file")
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
        req = CaptureRequest(script, [spec_path], args.python, targets or ["sm_90"], args.llvm_passes, args.exact_links)
        return capture_into(req, output, command, args, strict=True)


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


def capture_into(req: CaptureRequest, output: str, command: list[str], args, strict: bool = False) -> int:
    """Run the capture, storing each kernel in ``output`` as it arrives."""
    console = Console(stderr=True, soft_wrap=True)
    quiet = getattr(args, "quiet", False) or getattr(args, "json", False)
    info = run_info(req, command)
    existed = os.path.exists(output)
    bundle = Bundle.open(output, create=True)
    run_id = bundle.begin_run(info)
    stored: list[int] = []
    counts = {"n": 0, "last": ""}
    progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                        transient=True, disable=quiet)

    def on_capture(kernel):
        stored.append(bundle.add_capture(run_id, kernel))
        counts["n"] += 1
        counts["last"] = f"{kernel.kernel} [{kernel.variant}] {kernel.target}"
        progress.update(task, description=f"capturing: {counts['n']} kernel(s), last {counts['last']}")

    def on_driver(report):
        if report.get("hash"):
            bundle.set_driver_resources(run_id, report["hash"], report.get("n_regs"), report.get("n_spills"))

    def on_output(line):
        if not quiet:
            progress.console.print(line, markup=False, highlight=False, soft_wrap=True)

    outcomes = []
    interrupted = False
    try:
        with progress:
            task = progress.add_task(f"running {os.path.basename(req.script)}", total=None)
            outcomes = run_capture(req, on_capture, on_driver, on_output)
        interrupted = any(o.interrupted for o in outcomes)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        problem = _problem_line(outcomes, interrupted)
        status = "interrupted" if interrupted else ("failed" if problem else "ok")
        bundle.finish_run(run_id, complete=not interrupted, status=status, error=problem)
    bundle.close()
    rows = []
    if stored:
        with irscope.open(output) as view:
            rows = [c for c in view.captures() if c.id in set(stored)]
    output_exists = True
    if not stored and not existed:
        os.remove(output)  # nothing captured into a bundle we created: leave no empty file
        output_exists = False

    if args.json:
        print(json.dumps([r.to_json() for r in rows], indent=2))
    elif rows:
        stdout_console().print(capture_table(rows))
    for note in dict.fromkeys(n for r in rows for n in r.row.notes):
        console.print(f"[yellow]note:[/] {note}", highlight=False)
    if output_exists:
        size = os.path.getsize(output)
        console.print(f"bundle: {output} ({human_bytes(size)}, {len(rows)} capture(s) added)")
    return _exit_code(outcomes, rows, interrupted, problem, console, strict or getattr(args, "strict", False))


def _problem_line(outcomes, interrupted: bool) -> str | None:
    if interrupted:
        return "interrupted: the run was stopped; every kernel finished before is kept"
    for o in outcomes:
        err = o.script_error
        if o.exit_code == 4 or (err and err.get("kind") == "no-triton"):
            return f"no Triton in that interpreter: {err.get('type')}: {err.get('message')}" if err else "no Triton in that interpreter"
        if err:
            where = f" at {err['where']}" if err.get("where") else ""
            detail = f"{err.get('type')}: {err.get('message')}"
            if err.get("kind") == "data-dependent":
                detail = "it reads tensor values, which compile-only mode does not compute"
            return f"script failed{where} ({_label(o)}): {detail}"
        if o.exit_code not in (0, None):
            return f"script exited with code {o.exit_code} ({_label(o)})"
    return None


def _label(outcome) -> str:
    if outcome.target:
        return outcome.target
    return "compile-only, sm_90" if outcome.mode == "compile-only" else "gpu"


def _exit_code(outcomes, rows, interrupted, problem, console, strict) -> int:
    failed = [r.row for r in rows if r.error]
    if interrupted:
        console.print(f"irscope: {problem}", highlight=False)
        return EXIT_INTERRUPTED
    if failed:
        r = failed[0]
        where = f" in pass {r.failed_pass}" if r.failed_pass else (f" in {r.failed_stage}" if r.failed_stage else "")
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        print(f"irscope: error: {r.kernel} [{r.variant}] {r.target} failed to compile{where}: {r.error}{more}; "
              f"the stages that compiled are kept", file=sys.stderr)
        return EXIT_COMPILE_FAILED
    if problem is None:
        return 0
    compile_only = all(o.mode == "compile-only" for o in outcomes)
    if rows and compile_only and not strict and "no Triton" not in problem:
        console.print(f"[yellow]note:[/] {problem}; {len(rows)} kernel(s) captured", highlight=False)
        return 0
    print(f"irscope: error: {problem}" + (f"; {len(rows)} kernel(s) captured" if rows else ""), file=sys.stderr)
    return EXIT_SCRIPT_FAILED
