"""``irscope compile FILE::KERNEL``: compile one kernel with no driver script.

Run by irscope_bootstrap as the "script": ``irscope_compile_kernel.py SPEC.json``.
The spec names the file, the kernel, the signature (types of the runtime
arguments), constexpr values and options. Builds Triton's ``ASTSource`` the way
the installed version wants it (its arguments changed at 3.3) and compiles for
the active driver's target (irscope's stand-in driver in compile-only mode).
Standard library and Triton only.
"""

import importlib.util
import json
import os
import sys


class CompileSpecError(Exception):
    """The spec does not fit the kernel (no such kernel, a parameter without a type):
    irscope says the message as its one-line error (an exception, not SystemExit, so
    nothing is echoed on stderr besides it)."""


MODULE = "_irscope_kernel_module"
"""The name :func:`load_object` gives the kernel's module."""


def load_object(path, name):
    """The module-level object ``name`` of the Python file ``path`` (loaded as a module,
    not as ``__main__``), wrappers and all."""
    spec = importlib.util.spec_from_file_location(MODULE, path)
    if spec is None or spec.loader is None:
        raise CompileSpecError("cannot load %s" % path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    if not hasattr(module, name):
        raise CompileSpecError("%s has no kernel named %r" % (path, name))
    return getattr(module, name)


def load_kernel_object(path, name, who):
    """The kernel object of ``path`` (wrappers and all), loaded with the kernel
    launches its file makes at import (a script with no ``__main__`` guard, as
    Triton's tutorials are) doing nothing: they would compile, and be captured, in
    every compile child. Warmups still compile (a script may read the compiled kernel it gets
    back). A file that fails so (it used what a launch returns) is loaded again with
    its launches as they are: the parent keeps only the compiles it asked for. A file that
    fails after it defined the kernel gives that kernel."""
    from triton.runtime.jit import JITFunction

    run = JITFunction.run

    def no_launch(self, *args, **kwargs):
        if kwargs.get("warmup"):
            return run(self, *args, **kwargs)
        return None

    JITFunction.run = no_launch
    try:
        return load_object(path, name)
    except CompileSpecError:
        raise
    except (Exception, SystemExit) as exc:  # the user's script run as a module (argparse exits too): looked at below
        # A script whose code after the kernel fails without a GPU (a check of the
        # results, a benchmark) has defined the kernel by then, decorators and all.
        module = sys.modules.get(MODULE)
        if module is not None and hasattr(module, name):
            print("%s: %s failed after defining %s (%s: %s); compiling that kernel"
                  % (who, path, name, type(exc).__name__, (str(exc).strip().splitlines() or [""])[0][:200]))
            return getattr(module, name)
    finally:
        JITFunction.run = run
    return load_object(path, name)


def _load_kernel(path, name):
    fn = load_kernel_object(path, name, "irscope compile")
    # Autotuner and Heuristics wrap the JITFunction in ``.fn`` and copy its ``arg_names``,
    # so unwrap by kind, not by attribute.
    while type(fn).__name__ in ("Autotuner", "Heuristics") and hasattr(fn, "fn"):
        fn = fn.fn
    if not hasattr(fn, "arg_names"):
        raise CompileSpecError("%s.%s is not a @triton.jit kernel" % (os.path.basename(path), name))
    return fn


def constexpr_value(text):
    """``64`` -> 64, ``0.5`` -> 0.5, ``True`` -> True, anything else stays text (also
    how ``irscope tune`` reads a grid's values)."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text in ("True", "False"):
        return text == "True"
    return text


def main(spec_path):
    with open(spec_path) as f:
        spec = json.load(f)
    import triton
    from triton.compiler import ASTSource

    fn = _load_kernel(spec["file"], spec["kernel"])
    names = list(fn.arg_names)
    types = dict(spec["signature"])  # name -> type ('*fp32', 'i32', ...)
    divisible = set(spec.get("divisible", []))  # names hinted divisible by 16
    constexprs = {k: constexpr_value(v) for k, v in spec.get("constexprs", {}).items()}
    runtime = [n for n in names if n not in constexprs]
    positional = {k: v for k, v in types.items() if k.startswith("#")}
    if positional:  # '*fp32,i32': runtime parameters in order
        if len(positional) > len(runtime):
            raise CompileSpecError("%d types given, %s has %d runtime parameters (%s)" % (len(positional), spec["kernel"], len(runtime), ", ".join(runtime)))
        renamed = {runtime[int(k[1:])]: v for k, v in positional.items()}
        divisible = {runtime[int(k[1:])] if k.startswith("#") else k for k in divisible}
        types = {**{k: v for k, v in types.items() if not k.startswith("#")}, **renamed}
    missing = [n for n in names if n not in types and n not in constexprs]
    if missing:
        raise CompileSpecError("no type or value given for %s (use --signature / --constexpr)" % ", ".join(missing))
    unknown = [n for n in list(types) + list(constexprs) if n not in names]
    if unknown:
        raise CompileSpecError("%s has no parameter %s (it has: %s)" % (spec["kernel"], ", ".join(unknown), ", ".join(names)))
    version = tuple(int(x) for x in triton.__version__.split(".")[:2])
    if version >= (3, 3):
        signature = {n: ("constexpr" if n in constexprs else types[n]) for n in names}
        consts = {(names.index(n),): v for n, v in constexprs.items()}
        attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in names if n in divisible}
        src = ASTSource(fn, signature, constexprs=consts, attrs=attrs)
    else:
        from triton.backends.compiler import AttrsDescriptor

        signature = {n: types[n] for n in names if n not in constexprs}
        attrs = AttrsDescriptor.from_hints({names.index(n): 16 for n in divisible})
        src = ASTSource(fn, signature, constants=dict(constexprs), attrs=attrs)
    options = {k: v for k, v in spec.get("options", {}).items() if v is not None}
    import triton.runtime.driver  # noqa: F401

    target = sys.modules["triton.runtime.driver"].driver.active.get_current_target()
    kernel = triton.compile(src, target=target, options=options)
    print("compiled %s for %s" % (spec["kernel"], target))
    return kernel


if __name__ == "__main__":
    main(sys.argv[1])
