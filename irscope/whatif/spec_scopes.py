"""Scopes for the modules of a kernel whose names clash: two helpers called ``leaky``
in two modules, or two ``SLOPE`` values. A reproducer is one module, so each module
that holds a clashing name gets a function of its own that defines that module's
names and helpers as locals and returns the helpers (Triton reads a helper's closure
as it reads its module's globals):

    def _scope_1():  # heldout_a_pkg.sub.alt
        SLOPE = tl.constexpr(0.5)

        @triton.jit
        def leaky(x):
            return tl.where(x > 0, x, x * SLOPE)

        return {'leaky': leaky}


    _scope_1 = _scope_1()

What the kernel reads of them is then ``_scope_1['leaky']``. The record comes from the
capture's ``globals`` attachment (``#scopes``: each module's functions and the names
they read, written by ``capture/child/irscope_child_globals.py`` when names clash).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

SCOPES = "#scopes"
KERNEL_MODULE = "#kernel_module"


@dataclass
class Scoped:
    """The modules given scopes of their own, and how the rest of the script names
    their helpers."""

    modules: list[str] = field(default_factory=list)
    """In definition order (a scope that reads another's helper comes after it)."""
    refs: dict[tuple[str, str], str] = field(default_factory=dict)
    """(module, helper) -> the expression naming it: ``_scope_1['leaky']``."""
    functions: set[str] = field(default_factory=set)
    """Names of helpers defined only inside scopes (left out of the module level)."""
    text: str = ""
    """The scope functions' source."""


def _names(scope: dict[str, Any]) -> dict[str, Any]:
    got = scope.get("names")
    return got if isinstance(got, dict) else {}


def _functions(scope: dict[str, Any]) -> dict[str, Any]:
    got = scope.get("functions")
    return got if isinstance(got, dict) else {}


def ref_of(entry: dict[str, Any], refs: dict[tuple[str, str], str]) -> str | None:
    """How the script names the helper a recorded entry (``{"alias"|"jit", "of"}``)
    binds, when it lives in a scope; None otherwise."""
    own = entry.get("alias")
    of = entry.get("of")
    if not isinstance(of, str):
        return None
    if not isinstance(own, str):
        own = entry.get("name")
    return refs.get((of, own)) if isinstance(own, str) else None


def scoped_modules(recorded: dict[str, Any], clashes: set[str]) -> Scoped | None:
    """The scopes for the modules (other than the kernel's) that hold a clashing name;
    None when the record has no scopes, or their order cannot be settled (two scopes
    that read each other's helpers)."""
    scopes = recorded.get(SCOPES)
    kernel_module = recorded.get(KERNEL_MODULE)
    if not isinstance(scopes, dict) or not clashes:
        return None
    chosen = [m for m, s in scopes.items() if m != kernel_module and isinstance(s, dict)
              and (set(_functions(s)) | set(_names(s))) & clashes]
    if not chosen:
        return None
    refs = {(m, own): f"_scope_{i + 1}[{own!r}]" for i, m in enumerate(chosen) for own in _functions(scopes[m])}
    outside = {own for m, s in scopes.items() if m not in chosen and isinstance(s, dict) for own in _functions(s)}
    functions = {own for m in chosen for own in _functions(scopes[m])} - outside
    # order: a scope after the scopes whose helpers it reads
    deps = {m: {e.get("of") for e in _entries(_names(scopes[m])) if e.get("of") in chosen and e.get("of") != m}
            for m in chosen}
    order: list[str] = []
    while len(order) < len(chosen):
        ready = [m for m in chosen if m not in order and deps[m] <= set(order)]
        if not ready:
            return None
        order.append(ready[0])
    out = Scoped(order, refs, functions)
    out.text = "\n\n\n".join(_scope_text(chosen.index(m) + 1, m, scopes[m], refs) for m in order)
    return out


def _entries(names: dict[str, Any]) -> list[dict[str, Any]]:
    """Every recorded entry, module attributes included."""
    out: list[dict[str, Any]] = []
    todo = [v for v in names.values() if isinstance(v, dict)]
    while todo:
        e = todo.pop()
        out.append(e)
        attrs = e.get("attrs")
        if isinstance(attrs, dict):
            todo += [v for v in attrs.values() if isinstance(v, dict)]
    return out


def module_lines(name: str, module: str, attrs: dict[str, Any], refs: dict[tuple[str, str], str],
                 defined: set[str], *, strict: bool = False) -> list[str] | None:
    """``name = types.ModuleType(module)`` and one assignment per attribute the kernel
    reads off it (a helper among ``defined``, a value, a submodule built the same way:
    ``pkg.sub = types.ModuleType('pkg.sub')``, an installed module imported by its
    name). An attribute none of these rebuilds is left out, or, when ``strict``, makes
    the whole module None (the kernel's own scope cannot do without it)."""
    lines = [f"{name} = types.ModuleType({module!r})"]
    for attr, got in sorted(attrs.items()):
        if not isinstance(got, dict):
            if strict:
                return None
            continue
        ref = ref_of(got, refs)
        sub: list[str] | None = []
        if isinstance(got.get("expr"), str):
            lines.append(f"{name}.{attr} = {got['expr']}")
        elif ref is not None:
            lines.append(f"{name}.{attr} = {ref}")
        elif got.get("alias") in defined:
            lines.append(f"{name}.{attr} = {got['alias']}")
        elif isinstance(got.get("attrs"), dict):
            sub = module_lines(f"{name}.{attr}", str(got.get("module") or attr), got["attrs"], refs, defined,
                               strict=strict)
            lines += sub or []
        elif isinstance(got.get("import"), str):
            lines.append(f"{name}.{attr} = importlib.import_module({got['import']!r})")
        else:
            sub = None
        if sub is None and strict:
            return None
    return lines


def _undecorated(text: str) -> str:
    """A recorded source from its ``def`` on (Triton records it without decorators)."""
    lines = text.splitlines()
    tree = ast.parse("\n".join(lines))
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    return "\n".join(lines[node.lineno - 1:node.end_lineno or len(lines)])


def _scope_text(index: int, module: str, scope: dict[str, Any], refs: dict[tuple[str, str], str]) -> str:
    """One module's scope function, and its call."""
    functions = _functions(scope)
    head: list[str] = []
    tail: list[str] = []
    for name, got in sorted(_names(scope).items()):
        if not isinstance(got, dict) or (name in functions and got.get("of") == module and "alias" not in got):
            continue
        ref = ref_of({**got, "name": name}, refs)
        if isinstance(got.get("import"), str):
            head.append(got["import"])
        elif isinstance(got.get("expr"), str):
            head.append(f"{name} = {got['expr']}")
        elif got.get("of") == module and isinstance(got.get("alias"), str):
            tail.append(f"{name} = {got['alias']}")
        elif ref is not None:
            head.append(f"{name} = {ref}")
        elif isinstance(got.get("alias"), str):
            head.append(f"{name} = {got['alias']}")
        elif isinstance(got.get("attrs"), dict):
            tail += module_lines(name, str(got.get("module") or name), got["attrs"], refs, set(functions)) or []
    body = list(head)
    for own, fn in functions.items():
        if not isinstance(fn, dict) or not isinstance(fn.get("jit"), str):
            continue
        deco = "@triton.jit(noinline=True)" if fn.get("noinline") else "@triton.jit"
        body += ["", deco, *_undecorated(fn["jit"]).splitlines()]
        if fn.get("noinline"):  # Triton's symbol for it names its module and name
            body.append(f"{own}.__module__, {own}.__qualname__ = {module!r}, {own!r}")
    body += ([""] + tail) if tail else []
    body += ["", "return {" + ", ".join(f"{own!r}: {own}" for own in functions) + "}"]
    indented = "\n".join(("    " + ln) if ln.strip() else "" for ln in body)
    return f"def _scope_{index}():  # {module}\n{indented}\n\n\n_scope_{index} = _scope_{index}()"
