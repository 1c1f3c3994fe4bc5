"""What a compile's source and failure say, for irscope's compile hook
(:mod:`irscope_child_hook`): the kernel's name, file, ``def`` line and source, and
an error's message, traceback and Python line; Triton's reproducer taken out of
what the terminal shows.

Like the hook, this runs inside the captured script's processes, in any
environment that has Triton (3.0 to 3.9): the standard library only.
"""

import traceback


def source_info(src):
    """Kernel name, file, first line and Python source of a compile's source."""
    fn = getattr(src, "fn", None)
    info = {"kernel": getattr(src, "name", None) or "<ir>", "file": None, "first_line": None, "source": None}
    if fn is None:  # an IR file compiled directly
        info["file"] = getattr(src, "path", None)
        return info
    pyfn = getattr(fn, "fn", fn)
    code = getattr(pyfn, "__code__", None)
    info["kernel"] = getattr(pyfn, "__name__", info["kernel"])
    info["qualname"] = getattr(pyfn, "__qualname__", None)
    info["module"] = getattr(pyfn, "__module__", None)
    if code is not None:
        info["file"] = code.co_filename
        info["first_line"] = triton_def_line(fn) or def_line(pyfn, code.co_firstlineno)
    info["source"] = getattr(fn, "src", None)
    return info


def triton_def_line(fn):
    """The ``def`` line by Triton's own numbers (``raw_src`` and ``starting_line_number``,
    read when the function was decorated): the line its locations count from, so a
    kernel's stored source lines up with its ops even where the file cannot be read
    again at compile time (Inductor's generated kernels). None when Triton has no such
    numbers."""
    base = fn
    for _ in range(8):  # an autotuner or heuristics wrapper holds the JIT function in .fn
        if hasattr(base, "starting_line_number"):
            break
        base = getattr(base, "fn", None)
    raw, start = getattr(base, "raw_src", None), getattr(base, "starting_line_number", None)
    if not isinstance(start, int) or not raw:
        return None
    for i, text in enumerate(raw):
        if text.strip().startswith("def "):
            return start + i
    return None


def def_line(pyfn, first):
    """Line of ``def``: Triton's ``fn.src`` starts there, after the decorators
    that ``co_firstlineno`` counts."""
    try:
        import inspect

        lines, start = inspect.getsourcelines(pyfn)
    except (OSError, TypeError):
        return first
    for i, text in enumerate(lines):
        if text.lstrip().startswith("def "):
            return start + i
    return first


def error_info(exc):
    text = str(exc)
    info = {
        "type": type(exc).__name__,
        "message": text,
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-20000:],
    }
    where = _compilation_error_where(exc)
    if where:
        info["where"] = where
    return info


def _compilation_error_where(exc):
    """File and line of a frontend error. Triton's ``at 2:38`` counts from the
    ``def`` of the function being compiled (maybe a helper): find that function
    in the traceback (the code generator whose source the error quotes)."""
    node = getattr(exc, "node", None)
    src = getattr(exc, "src", None)
    lineno = getattr(node, "lineno", None)
    if not isinstance(lineno, int) or src is None:
        return None
    tb = exc.__traceback__
    found = None
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        jit_fn = getattr(owner, "jit_fn", None)
        if jit_fn is not None and getattr(jit_fn, "src", None) == src:
            found = jit_fn
        tb = tb.tb_next
    if found is None:
        return None
    pyfn = getattr(found, "fn", found)
    code = getattr(pyfn, "__code__", None)
    if code is None:
        return None
    return {"file": code.co_filename, "line": def_line(pyfn, code.co_firstlineno) + lineno - 1,
            "column": getattr(node, "col_offset", None), "function": getattr(pyfn, "__name__", None)}


# Triton prints a failed ptxas input (the whole PTX, ~150 lines and more) to stdout
# between two rules; the record keeps it, the terminal gets one line about it.
_REPRODUCER_END = "please share the reproducer above with Triton project."


def strip_reproducer(text):
    end = text.find(_REPRODUCER_END)
    if end < 0:
        return text
    rule = "=" * 64
    first = text.rfind(rule, 0, text.rfind(rule, 0, end))
    if first < 0:
        return text
    start = first
    while start > 0 and text[start - 1] == "\n":
        start -= 1
    stop = end + len(_REPRODUCER_END)
    n = text.count("\n", first, stop)
    note = ("irscope: Triton's reproducer for the failed compile (%d lines) is kept in the bundle: "
            "irscope cat BUNDLE KERNEL --stage log\n" % n)
    head = text[:start]
    if head and not head.endswith("\n"):
        head += "\n"
    return head + note + text[stop:].lstrip("\n")
