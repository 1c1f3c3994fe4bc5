"""``irscope tune``: compile one kernel once per configuration, in one process.

Run by irscope_bootstrap as the "script": ``irscope_compile_grid.py SPEC.json``.
The spec holds what a capture recorded of one compile (the kernel's file and name,
its signature with Triton's specialisations, constexprs, attributes and options)
and a list of jobs, each a set of constexpr and option overrides. Every job is one
``triton.compile`` of the same ``ASTSource`` the JIT built, with the overrides
applied, so irscope's hook records each as an ordinary capture; a job that fails to
compile is recorded failed and the next one goes on. Triton is imported once for
all jobs. Standard library and Triton only (like irscope_compile_kernel.py).

The constexprs a ``@triton.heuristics`` wrapper of the kernel sets are computed
again for each job, as a launch would: its functions get the job's constexprs and
the captured launch's arguments (numbers as passed, tensors as ``meta`` tensors of
the captured shape, strides and dtype when torch is loaded) and options; one that
names an option (``num_warps``) sets that option. A heuristic that cannot be computed
so (the capture recorded no launch) keeps the captured value, and the report says
why. The block shapes of tensor descriptor parameters, which are part of their type,
are set by the autotuner config's ``pre_hook``, as a launch sets them. The kernel's
file is loaded with its own launches doing nothing (:func:`irscope_compile_kernel.load_kernel_object`).
"""

import json
import re
import sys

from irscope_compile_kernel import CompileSpecError, load_kernel_object  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path


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


# How a ``@triton.jit`` function passed as a constexpr reads in a capture's JSON.
_FUNCTION = re.compile(r"^JITFunction\(([\w.]*):([\w.<>]+)\)$")
_NAME = re.compile(r"^[A-Za-z_]\w*$")


def _functions(constexprs, captured, fn):
    """``constexprs`` with the ``@triton.jit`` functions passed as constexprs
    (``ACT=relu``) back as functions: the captured text ``JITFunction(module:relu)``,
    and a grid's bare name (``ACT=relu,gelu``) for a key the capture passed a function
    in, each looked up among the kernel's module-level names."""
    names = getattr(fn, "__globals__", None) or getattr(getattr(fn, "fn", None), "__globals__", {})
    out = {}
    for key, value in constexprs.items():
        name = None
        if isinstance(value, str):
            m = _FUNCTION.match(value)
            if m:
                name = m.group(2).split(".")[-1]
            elif _NAME.match(value) and isinstance(captured.get(key), str) and _FUNCTION.match(captured[key]):
                name = value
        out[key] = names.get(name, value) if name else value
    return out


def _jit_function(fn):
    """(the ``JITFunction`` under an ``@triton.autotune`` / ``@triton.heuristics``
    wrapper (those have ``arg_names`` too, and hold the function in ``.fn``), the
    ``{name: function}`` dicts of the heuristics wrappers, outermost first: the order a
    launch computes them in)."""
    from triton.runtime.jit import JITFunction

    heuristics = []
    configs = []
    for _ in range(8):
        if isinstance(fn, JITFunction) or not hasattr(fn, "fn"):
            break
        values = getattr(fn, "values", None)
        if isinstance(values, dict):  # @triton.heuristics: {name: lambda args: ...}
            heuristics.append(values)
        if isinstance(getattr(fn, "configs", None), list):  # @triton.autotune
            configs += fn.configs
        fn = fn.fn
    if not isinstance(fn, JITFunction):
        raise CompileSpecError("%s is not a @triton.jit kernel" % getattr(fn, "__name__", type(fn).__name__))
    return fn, heuristics, configs


# A tensor descriptor's type in a signature: ``tensordesc<fp16[64, 64]>`` (and a layout after).
_DESC = re.compile(r"^(tensordesc<[^\[>]*)\[([^\]]*)\](.*)$")


class _DescriptorStandIn:
    """A host tensor descriptor as an autotuner's config ``pre_hook`` sees it: the hook
    sets its ``block_shape`` for the configuration (Triton's tutorials do)."""

    def __init__(self, block_shape):
        self.block_shape = list(block_shape)


def _pre_hook(configs, constexprs):
    """The ``pre_hook`` of the autotuner's config the captured compile was made with
    (the first whose values it holds), else of the first config that has one; None
    when no config has one."""
    hooked = [c for c in configs if getattr(c, "pre_hook", None) is not None]
    for c in hooked:
        if all(str(constexprs.get(k)) == str(_constexpr(v)) for k, v in (getattr(c, "kwargs", None) or {}).items()):
            return c.pre_hook
    return hooked[0].pre_hook if hooked else None


def _descriptor_types(hook, signature, args):
    """The signature's tensor descriptor types with the block shapes ``hook`` (a config's
    ``pre_hook``) sets for one job's ``args``, as a launch of that configuration
    would type them: ({name: type} of those it changed, why it could not, or None)."""
    descs = {}
    for name, typ in signature.items():
        m = _DESC.match(typ) if isinstance(typ, str) else None
        if m:
            descs[name] = (m, _DescriptorStandIn(int(d) for d in m.group(2).split(",") if d.strip()))
    if not descs or hook is None:
        return {}, None
    nargs = dict(args)
    nargs.update({name: stand_in for name, (_, stand_in) in descs.items()})
    try:
        hook(nargs)
    except Exception as exc:  # the user's hook: a failure keeps the captured block shapes
        return {}, "%s: %s" % (type(exc).__name__, (str(exc).strip().splitlines() or [""])[0][:200])
    out = {}
    for name, (m, stand_in) in descs.items():
        typ = "%s[%s]%s" % (m.group(1), ", ".join(str(int(d)) for d in stand_in.block_shape), m.group(3))
        if typ != signature[name]:
            out[name] = typ
    return out, None


class _TensorStandIn:
    """A launch's tensor argument when torch is not loaded: what a heuristic may read
    of it (shape, dtype name, strides, sizes)."""

    def __init__(self, shape, stride, dtype):
        self.shape, self._stride, self.dtype = tuple(shape), tuple(stride or ()), dtype

    def stride(self, dim=None):
        return self._stride if dim is None else self._stride[dim]

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return len(self.shape)

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n


def _launch_value(got):
    """One captured launch argument as a heuristic sees it: a number as passed; a
    tensor as a ``meta`` tensor of its shape, strides and dtype (torch, when the
    kernel's module loaded it), else a :class:`_TensorStandIn`."""
    if "value" in got:
        return got["value"]
    torch = sys.modules.get("torch")
    dtype = getattr(torch, str(got.get("dtype")), None) if torch is not None else None
    if torch is not None and dtype is not None and got.get("stride") is not None:
        try:
            return torch.empty_strided(got["shape"], got["stride"], dtype=dtype, device="meta")
        except Exception:  # a torch that cannot build it: the stand-in has the same figures
            pass
    return _TensorStandIn(got["shape"], got.get("stride"), got.get("dtype"))


def _heuristic_values(heuristics, launch, constexprs, fixed, options=None):
    """The constexprs the heuristics set for one job, computed as a launch does
    (outer wrapper first, each function seeing the values set before it), from the
    captured launch arguments ``launch``, the job's ``constexprs`` and its
    ``options`` (an autotuner's config hands its ``num_warps``... to the heuristics
    too); names in ``fixed`` (the grid's) are not computed. ({name: value}, {name: why
    it could not be computed})."""
    names = [n for values in heuristics for n in values if n not in fixed]
    args = {n: v for n, v in (options or {}).items() if v is not None}
    args.update({n: _launch_value(v) for n, v in launch.items() if isinstance(v, dict)})
    args.update({n: _constexpr(v) for n, v in constexprs.items() if n not in names})
    got, kept = {}, {}
    for values in heuristics:
        for name, heur in values.items():
            if name in fixed:
                continue
            try:
                value = heur(dict(args))
            except Exception as exc:  # the user's function: any failure keeps the captured value
                kept[name] = "%s: %s" % (type(exc).__name__, str(exc).strip().splitlines()[0][:200] if str(exc).strip() else "")
                if name in constexprs:
                    args[name] = _constexpr(constexprs[name])
                continue
            got[name] = args[name] = value
    return got, kept


def _path(key):
    """The path inside a tuple parameter that a captured constexpr or attribute key
    names (the hook writes Triton's ``(2, 1)`` as the text ``"(2, 1)"``); None for a
    parameter's name."""
    text = key.strip() if isinstance(key, str) else ""
    if not (text.startswith("(") and text.endswith(")")):
        return None
    try:
        parts = [int(x) for x in text[1:-1].split(",") if x.strip()]
    except ValueError:
        return None
    return tuple(parts) or None


def _tuple_type(value):
    """A captured tuple parameter's type (JSON lists) as Triton's signature takes it."""
    return tuple(_tuple_type(v) for v in value) if isinstance(value, list) else value


def _source(fn, spec, constexprs):
    """The ``ASTSource`` of one job (Triton 3.3+: the signature names every parameter,
    ``constexpr`` for the constant ones, a tuple of types for a tuple parameter;
    constants and attributes keyed by their path, ``(index,)`` for a parameter and
    ``(index, element...)`` inside a tuple parameter)."""
    from triton.compiler import ASTSource

    names = list(fn.arg_names)
    signature = {n: _tuple_type(t) for n, t in spec["signature"].items()}
    named = {n: v for n, v in constexprs.items() if _path(n) is None}
    unknown = [n for n in list(signature) + list(named) if n not in names]
    if unknown:
        raise CompileSpecError("%s has no parameter %s (it has: %s)" % (spec["kernel"], ", ".join(unknown), ", ".join(names)))
    for n in named:
        signature[n] = "constexpr"
    missing = [n for n in names if n not in signature]
    if missing:
        raise CompileSpecError("the capture gives no type for %s" % ", ".join(missing))
    ordered = {n: signature[n] for n in names}
    consts = {(_path(n) or (names.index(n),)): _constexpr(v) for n, v in constexprs.items()}
    attrs = {(_path(n) or (names.index(n),)): [list(a) for a in v] for n, v in spec.get("attrs", {}).items()
             if n in names or _path(n) is not None}
    return ASTSource(fn, ordered, constexprs=consts, attrs=attrs)


def main(spec_path):
    with open(spec_path) as f:
        spec = json.load(f)
    import triton

    version = tuple(int(x) for x in triton.__version__.split(".")[:2])
    if version < (3, 3):
        raise CompileSpecError("irscope tune compiles with Triton 3.3 or later (this is %s)" % triton.__version__)
    fn, heuristics, configs = _jit_function(load_kernel_object(spec["file"], spec["kernel"], "irscope tune"))
    hook = _pre_hook(configs, spec.get("constexprs", {}))
    import triton.runtime.driver  # noqa: F401

    target = sys.modules["triton.runtime.driver"].driver.active.get_current_target()
    done = 0
    report: dict = {"heuristics": [str(n) for values in heuristics for n in values], "jobs": [],
                    "descriptors": [n for n, t in spec["signature"].items() if isinstance(t, str) and _DESC.match(t)],
                    "pre_hook": hook is not None}
    for job in spec["jobs"]:
        constexprs = dict(spec.get("constexprs", {}))
        constexprs.update(job.get("constexprs", {}))
        constexprs = _functions(constexprs, spec.get("constexprs", {}), fn)
        options = dict(spec.get("options", {}))
        options.update(job.get("options", {}))
        options = {k: v for k, v in options.items() if v is not None}
        args = {n: v for n, v in options.items()}
        args.update({n: _launch_value(v) for n, v in (spec.get("launch") or {}).items() if isinstance(v, dict)})
        args.update({n: _constexpr(v) for n, v in constexprs.items()})
        descs, desc_problem = _descriptor_types(hook, spec["signature"], args)
        got, kept = _heuristic_values(heuristics, spec.get("launch") or {}, constexprs,
                                      set(job.get("constexprs", {})) | set(job.get("options", {})), options)
        report["jobs"].append({"label": job.get("label"), "set": {k: repr(v) for k, v in got.items()}, "kept": kept,
                               "descriptors": descs, "descriptors_kept": desc_problem})
        if spec.get("report"):  # what the parent cannot see from the captures, so far
            with open(spec["report"], "w") as f:
                json.dump(report, f)
        # A heuristic may set an option (``"num_warps": lambda args: ...``): a launch passes
        # what is not a parameter of the kernel on as an option.
        constexprs.update({k: v for k, v in got.items() if k in fn.arg_names})
        options.update({k: v for k, v in got.items() if k not in fn.arg_names})
        src = _source(fn, dict(spec, signature={**spec["signature"], **descs}), constexprs)
        try:
            triton.compile(src, target=target, options=options)
            done += 1
        except Exception as exc:  # recorded by irscope's hook as a failed capture; the grid goes on
            first = (str(exc).strip().splitlines() or [""])[-1]
            print("irscope tune: %s failed: %s: %s" % (job.get("label", "a configuration"), type(exc).__name__, first[:200]))
    print("irscope tune: compiled %d of %d configuration(s) for %s" % (done, len(spec["jobs"]), target))


if __name__ == "__main__":
    main(sys.argv[1])
