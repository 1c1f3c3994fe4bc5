"""The launch that started a compile, for the compile hook (:mod:`irscope_child_hook`):
each ``JITFunction.run`` call's arguments and grid are remembered while it runs, so a
compile it starts records its grid and the shapes of its arguments (``irscope repro``
launches the kernel on inputs of the same shapes, with the same grid).

Standard library only, like the hook: it runs inside the user's Python.
"""

import threading

# The ``JITFunction.run`` call in progress on this thread: (function, args, kwargs).
_STATE = threading.local()


def patch_jit_run():
    """Remember each ``JITFunction.run`` call's arguments and grid while it runs, so a
    compile it starts can record its launch (``irscope repro`` launches the kernel on
    inputs of the same shapes, with the same grid)."""
    from triton.runtime import jit

    cls = getattr(jit, "JITFunction", None)
    original = getattr(cls, "run", None)
    if cls is None or original is None or getattr(original, "_irscope", False):
        return

    def run(self, *args, **kwargs):
        saved = getattr(_STATE, "launch", None)
        _STATE.launch = (self, args, kwargs)
        try:
            return original(self, *args, **kwargs)
        finally:
            _STATE.launch = saved

    run._irscope = True  # type: ignore[attr-defined]  # marks the wrapper: patch once
    cls.run = run


def _launch_value(value):
    """A launch argument as JSON: a tensor's shape, stride and dtype; a number; else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return {"value": value}
    if hasattr(value, "shape") and hasattr(value, "dtype") and hasattr(value, "stride"):
        return {"shape": [int(d) for d in value.shape], "stride": [int(d) for d in value.stride()],
                "dtype": str(value.dtype).replace("torch.", "")}
    return None


def launch_info(src):
    """The grid and argument shapes of the launch compiling ``src``; None for a compile
    no launch started (``triton.compile`` called directly, a warmup without a grid)."""
    state = getattr(_STATE, "launch", None)
    fn = getattr(src, "fn", None)
    if state is None or fn is None or state[0] is not fn:
        return None
    try:
        _, args, kwargs = state
        names = list(fn.arg_names)
        values = dict(zip(names, args))
        values.update({k: v for k, v in kwargs.items() if k in names})
        out = {name: got for name, got in ((n, _launch_value(v)) for n, v in values.items()) if got is not None}
    except Exception:  # a record of the launch is optional: never break the user's launch for it
        return None
    try:
        grid = kwargs.get("grid")
        if callable(grid):  # the launch calls it after the compile with the same values
            grid = grid({**{k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}, **values})
        if isinstance(grid, int):
            grid = (grid,)
        grid = [int(g) for g in grid] if isinstance(grid, (tuple, list)) else None
    except Exception:  # a grid function that needs more than the arguments: the shapes still help
        grid = None
    return {"grid": grid, "args": out}

