"""Loaded by every Python process started under ``irscope run`` (via PYTHONPATH).

It installs irscope's compile hook when IRSCOPE_SPOOL is set, so kernels compiled
in worker processes (torch.compile's parallel compile) are captured too, then
hands over to any other ``sitecustomize`` the environment had, so we never hide one.
"""

import os
import sys


def _chain_next_sitecustomize():
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    others = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


if os.environ.get("IRSCOPE_SPOOL"):
    try:
        import irscope_child_hook  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path

        irscope_child_hook.install()
    except Exception as exc:  # the script must run even if the hook cannot
        sys.stderr.write("irscope: capture hook not installed: %s: %s\n" % (type(exc).__name__, exc))

try:
    _chain_next_sitecustomize()
except Exception as exc:  # the script must run even if the environment's own hook fails
    sys.stderr.write("irscope: the environment's own sitecustomize failed: %s\n" % exc)
