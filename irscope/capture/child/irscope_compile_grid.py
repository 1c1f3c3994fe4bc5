"""``irscope tune``: compile one kernel once per configuration, in one process.

Run by irscope_bootstrap as the "script": ``irscope_compile_grid.py SPEC.json``.
The spec holds what a capture recorded of one compile (the kernel's file and name,
its signature with Triton's specialisations, constexprs, attributes and options)
and a list of jobs, each a set of constexpr and option overrides. Every job is one
``triton.compile`` of the same ``ASTSource`` the JIT built, with the overrides
applied, so irscope's hook records each as an ordinary capture; a job that fails to
compile is recorded failed and the next one goes on. Triton is imported once for
all jobs. Standard library and Triton only (like irscope_compile_kernel.py).
"""

import json
import sys

from irscope_compile_kernel import CompileSpecError, load_object  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path

# How a Triton dtype constexpr reads in a capture's JSON (repr of ``tl.float16``).
_DTYPE_PREFIX = "triton.language."


def _constexpr(value):
    """A recorded constexpr value as the kernel wants it: a dtype's repr back to the
    dtype, anything else as JSON gave it."""
    if isinstance(value, str) and value.startswith(_DTYPE_PREFIX):
        import triton.language as tl

        dtype = getattr(tl, value[len(_DTYPE_PREFIX):], None)
        if dtype is not None:
            return dtype
    return value



def _jit_function(fn):
    """(the ``JITFunction`` under an ``@triton.autotune`` / ``@triton.heuristics``
    wrapper (those have ``arg_names`` too, and hold the function in ``.fn``), the names
    the heuristics wrappers set)."""
    from triton.runtime.jit import JITFunction

    heuristics: list[str] = []
    for _ in range(8):
        if isinstance(fn, JITFunction) or not hasattr(fn, "fn"):
            break
        values = getattr(fn, "values", None)
        if isinstance(values, dict):  # @triton.heuristics: {name: lambda args: ...}
            heuristics.extend(str(k) for k in values)
        fn = fn.fn
    if not isinstance(fn, JITFunction):
        raise CompileSpecError("%s is not a @triton.jit kernel" % getattr(fn, "__name__", type(fn).__name__))
    return fn, heuristics


def _source(fn, spec, constexprs):
    """The ``ASTSource`` of one job (Triton 3.3+: the signature names every parameter,
    ``constexpr`` for the constant ones; constants and attributes keyed by (index,))."""
    from triton.compiler import ASTSource

    names = list(fn.arg_names)
    signature = dict(spec["signature"])
    unknown = [n for n in list(signature) + list(constexprs) if n not in names]
    if unknown:
        raise CompileSpecError("%s has no parameter %s (it has: %s)" % (spec["kernel"], ", ".join(unknown), ", ".join(names)))
    for n in constexprs:
        signature[n] = "constexpr"
    missing = [n for n in names if n not in signature]
    if missing:
        raise CompileSpecError("the capture gives no type for %s" % ", ".join(missing))
    ordered = {n: signature[n] for n in names}
    consts = {(names.index(n),): _constexpr(v) for n, v in constexprs.items()}
    attrs = {(names.index(n),): [list(a) for a in v] for n, v in spec.get("attrs", {}).items() if n in names}
    return ASTSource(fn, ordered, constexprs=consts, attrs=attrs)


def main(spec_path):
    with open(spec_path) as f:
        spec = json.load(f)
    import triton

    version = tuple(int(x) for x in triton.__version__.split(".")[:2])
    if version < (3, 3):
        raise CompileSpecError("irscope tune compiles with Triton 3.3 or later (this is %s)" % triton.__version__)
    fn, heuristics = _jit_function(load_object(spec["file"], spec["kernel"]))
    if spec.get("report"):  # what the parent cannot see from the captures
        with open(spec["report"], "w") as f:
            json.dump({"heuristics": heuristics}, f)
    import triton.runtime.driver  # noqa: F401

    target = sys.modules["triton.runtime.driver"].driver.active.get_current_target()
    done = 0
    for job in spec["jobs"]:
        constexprs = dict(spec.get("constexprs", {}))
        constexprs.update(job.get("constexprs", {}))
        options = dict(spec.get("options", {}))
        options.update(job.get("options", {}))
        options = {k: v for k, v in options.items() if v is not None}
        src = _source(fn, spec, constexprs)
        try:
            triton.compile(src, target=target, options=options)
            done += 1
        except Exception as exc:  # recorded by irscope's hook as a failed capture; the grid goes on
            first = (str(exc).strip().splitlines() or [""])[-1]
            print("irscope tune: %s failed: %s: %s" % (job.get("label", "a configuration"), type(exc).__name__, first[:200]))
    print("irscope tune: compiled %d of %d configuration(s) for %s" % (done, len(spec["jobs"]), target))


if __name__ == "__main__":
    main(sys.argv[1])
