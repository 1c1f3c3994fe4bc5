"""The module-level names a compiled kernel reads, for irscope's compile hook
(:mod:`irscope_child_hook`): each one's value at compile time, written as the Python
expression that defines it again (``tl.constexpr(256)``, ``triton.language.float16``,
``import triton.language.extra.libdevice as ld``), so ``irscope repro`` can write a
self-contained script from the bundle alone, with no access to the original file.

The names are those the kernel and every ``@triton.jit`` function it reaches load
from their module (or enclosing function): Triton compiles them in as constants, so
their values are part of the compile. Triton's own record of them
(``JITFunction.used_global_vals``) misses a helper's names the first time a kernel
is hashed, so the functions are walked here.

Like the hook, this runs inside the captured script's processes, in any environment
that has Triton (3.0 to 3.9): the standard library only.
"""

import ast
import inspect
import math
import sys
import textwrap
import types

_MAX_FUNCTIONS = 200  # a bound on the walk: a kernel reaches a few dozen functions at most
CONFLICTS = "#conflicts"
"""The key of the names two modules the kernel reaches bind differently (two helpers
named ``leaky``, two ``SLOPE`` values): one script module cannot define both."""
SCOPES = "#scopes"
"""With conflicts: each module's functions (their sources) and the names they read,
so a script can define each module's functions in a scope of their own."""
KERNEL_MODULE = "#kernel_module"


def used_globals(src):
    """``{name: {"expr": python} | {"import": statement} | {"alias": helper} | {"jit":
    source, "noinline": bool} | {"module": name, "attrs": {...}} | {"repr": text}}`` for
    the module-level names the kernel compiled by ``src`` reads: a value, a module or
    Triton function a script can import, a ``@triton.jit`` helper bound under another
    name or under its own (its source), a module of the user's own (what is read off
    it), and ``repr`` for a value no expression rebuilds;
    None when ``src`` is no Python kernel or it reads none. A name bound to different
    values in two modules keeps the kernel's own (the first met), and is listed under
    :data:`CONFLICTS`, as is a helper name two functions share."""
    fn = getattr(src, "fn", None)
    if fn is None or not _is_jit(fn):
        return None
    out: dict = {}
    todo = [fn]
    seen: set = set()
    owners: dict = {}  # a helper's own name -> the function first met under it
    conflicts: set = set()
    scopes: dict = {}  # module -> the functions walked in it and the names they read
    while todo and len(seen) < _MAX_FUNCTIONS:
        f = todo.pop(0)
        if id(f) in seen:
            continue
        seen.add(id(f))
        scope = _scope(f)
        here = scopes.setdefault(_module_of(f), {"functions": {}, "names": {}})
        if f is not fn and isinstance(getattr(f, "src", None), str):
            here["functions"].setdefault(getattr(f.fn, "__name__", "?"),
                                         {"jit": f.src, "noinline": bool(getattr(f, "noinline", False))})
        for name, attrs in _loaded_names(f).items():
            if name not in scope:
                continue
            value = scope[name]
            if _is_jit(value) and not _in_triton(value):  # Triton's own (tl.sum...) read only its names
                todo.append(value)
                own = getattr(getattr(value, "fn", None), "__name__", name)
                if owners.setdefault(own, value.fn) is not value.fn:  # two helpers of one name
                    conflicts.add(own)
                entry = {"of": _module_of(value)}
                if own != name:
                    entry["alias"] = own
                if isinstance(getattr(value, "src", None), str):  # a Triton before 3.3 keeps no other source
                    entry.update({"jit": value.src, "noinline": bool(getattr(value, "noinline", False))})
                here["names"].setdefault(name, entry)
                if name not in out and ("alias" in entry or "jit" in entry):
                    # a helper under another name, or its source (a branch a constexpr prunes calls none)
                    out[name] = entry
                continue
            if isinstance(value, types.ModuleType):
                todo.extend(v for v in (_follow(value, path) for path in attrs) if _is_jit(v) and not _in_triton(v))
            got = _user_module(value, attrs) if isinstance(value, types.ModuleType) else None
            got = got or _definition(name, value)
            if got is not None:
                here["names"].setdefault(name, got)
            if name in out:
                if got is not None and got != out[name] and "attrs" not in got:
                    conflicts.add(name)  # another module binds the name to another value
                continue
            if got is not None:
                out[name] = got
    if conflicts:
        out[CONFLICTS] = sorted(conflicts)
        out[SCOPES] = scopes
        out[KERNEL_MODULE] = _module_of(fn)
    return out or None


def _module_of(f):
    """The module a JIT function was defined in."""
    return getattr(getattr(f, "fn", f), "__module__", None) or ""


def _is_jit(value):
    """A Triton JIT function (``JITFunction``, or a helper's ``JITCallable``)."""
    return hasattr(value, "fn") and hasattr(value, "arg_names") and callable(getattr(value, "fn", None))


def _in_triton(f):
    """A function of Triton's own library."""
    module = getattr(getattr(f, "fn", f), "__module__", None) or ""
    return module == "triton" or module.startswith("triton.")


def _scope(f):
    """The names ``f`` can read: its module's globals, then its enclosing function's."""
    pyfn = getattr(f, "fn", f)
    scope = dict(getattr(pyfn, "__globals__", None) or {})
    try:
        scope.update(inspect.getclosurevars(pyfn).nonlocals)
    except (TypeError, ValueError):  # a function inspect cannot read: its module's globals only
        pass
    return scope


def _loaded_names(f):
    """``{name: attribute paths read off it}`` for every name ``f``'s source loads (body
    and default values), minus its parameters and locals: ``pkg.sub.helper(x)`` reads
    the path ``("sub", "helper")`` off ``pkg``."""
    pyfn = getattr(f, "fn", f)
    text = getattr(f, "src", None)
    try:
        tree = ast.parse(textwrap.dedent(text)) if isinstance(text, str) else None
    except SyntaxError:
        tree = None
    if tree is None:
        code = getattr(pyfn, "__code__", None)
        return {n: set() for n in (code.co_names + code.co_freevars)} if code is not None else {}
    bound: set = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
    out: dict = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound:
            out.setdefault(node.id, set())
        elif isinstance(node, ast.Attribute):
            path = [node.attr]
            root = node.value
            while isinstance(root, ast.Attribute):
                path.append(root.attr)
                root = root.value
            if isinstance(root, ast.Name) and root.id not in bound:
                out.setdefault(root.id, set()).add(tuple(reversed(path)))
    return out


def _follow(value, path):
    """The value at ``path`` off ``value`` (``("sub", "helper")``: ``value.sub.helper``);
    None where an attribute is missing."""
    for attr in path:
        value = getattr(value, attr, None)
    return value


def _installed(module):
    """Whether a reproducer can import ``module`` anywhere this Triton is: Triton's own,
    the standard library's, or an installed package's (not a file of the user's)."""
    name = module.__name__
    if name == "triton" or name.startswith("triton.") or name.split(".")[0] in getattr(sys, "stdlib_module_names", ()):
        return True
    path = getattr(module, "__file__", None) or ""
    return not path or "site-packages" in path or "dist-packages" in path


def _user_module(module, paths, depth=0):
    """A module of the user's own (``import mylib`` then ``mylib.helper(x)``, or a
    package's ``pkg.sub.helper(x)``): what the kernel reads off it, so a script can
    build a module holding them (``{"module": name, "attrs": {attr: {"alias": helper} |
    {"expr": python} | {"module": ..., "attrs": ...}}}``, a submodule nested as its
    parent holds it); None for a module a script can import."""
    if _installed(module) or depth > 8:
        return None
    by_attr: dict = {}
    for path in paths:
        if path:
            by_attr.setdefault(path[0], set()).add(tuple(path[1:]))
    got = {}
    for attr in sorted(by_attr):
        value = getattr(module, attr, None)
        if _is_jit(value):
            got[attr] = {"alias": getattr(getattr(value, "fn", None), "__name__", attr), "of": _module_of(value)}
            src = getattr(value, "src", None)
            if isinstance(src, str):  # its source: a Triton before 3.3 keeps no other
                got[attr].update({"jit": src, "noinline": bool(getattr(value, "noinline", False))})
        elif isinstance(value, types.ModuleType):
            sub = _user_module(value, by_attr[attr], depth + 1)
            if sub is not None:
                got[attr] = sub
            else:
                got[attr] = {"import": value.__name__}
        else:
            expr = _expr(value, 0)
            if expr is not None:
                got[attr] = {"expr": expr}
    return {"module": module.__name__, "attrs": got}


def _definition(name, value):
    """How the script defines ``name`` again: an import for a module or a Triton
    function, an assignment for a value; None for what a script never defines itself
    (a builtin, a Triton module imported under its usual name)."""
    if isinstance(value, types.ModuleType):
        mod = value.__name__
        if (name, mod) in (("tl", "triton.language"), ("triton", "triton"), ("math", "math")):
            return None
        return {"import": "import %s as %s" % (mod, name) if mod != name else "import %s" % mod}
    if isinstance(value, types.BuiltinFunctionType) and getattr(value, "__module__", None) == "builtins":
        return None
    expr = _expr(value, 0)
    if expr is not None:
        return {"expr": expr}
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if isinstance(module, str) and module.startswith("triton") and isinstance(qualname, str) and "." not in qualname:
        return {"import": "from %s import %s" % (module, qualname) + ("" if qualname == name else " as %s" % name)}
    try:
        text = repr(value)
    except Exception:  # a user object whose repr fails: name it by its type
        text = "<%s>" % type(value).__name__
    return {"repr": text[:200]}


def _expr(value, depth):
    """A Python expression for ``value`` in a script that imported ``triton`` and
    ``triton.language as tl``; None when there is none."""
    if depth > 4:
        return None
    if value is None or type(value) in (bool, int, str):  # not a subclass (an IntEnum's repr is no literal)
        return repr(value)
    if type(value) is float:
        return repr(value) if math.isfinite(value) else "float(%r)" % repr(value)
    if isinstance(value, (tuple, list)) and type(value) in (tuple, list):
        items = [_expr(v, depth + 1) for v in value]
        if any(i is None for i in items):
            return None
        if isinstance(value, list):
            return "[%s]" % ", ".join(items)
        return "(%s,)" % items[0] if len(items) == 1 else "(%s)" % ", ".join(items)
    cls = type(value)
    module = getattr(cls, "__module__", "") or ""
    if not module.startswith("triton.language"):
        return None
    if cls.__name__ == "constexpr":
        inner = _expr(getattr(value, "value", None), depth + 1)
        return None if inner is None else "tl.constexpr(%s)" % inner
    if cls.__name__ == "pointer_type":
        inner = _expr(getattr(value, "element_ty", None), depth + 1)
        return None if inner is None else "tl.pointer_type(%s)" % inner
    text = repr(value)
    if cls.__name__ == "dtype" and text.startswith("triton.language.") and text[16:].isidentifier():
        return text
    return None
