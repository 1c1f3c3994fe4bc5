"""What loading a compiled kernel for its first launch says, for the compile hook
(:mod:`irscope_child_hook`): on a GPU, the driver's register and spill counts; in any
mode, a launch Triton refused (more shared memory or threads than the device has).
Each is a JSON file in the spool folder, beside the compile records.

Standard library only, like the hook: it runs inside the user's Python.
"""

import os
import sys
import threading

from irscope_child_record import write_json_atomic  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path

SPOOL = os.environ.get("IRSCOPE_SPOOL", "")

# Numbers the drv-/refused- files of this process; a load may happen on any thread.
_LOCK = threading.Lock()
_DRV_SEQ = [0]


def patch_init_handles(compiled_kernel_cls, gpu):
    """Report what loading a kernel for its first launch says: on a GPU, the
    driver's register and spill counts (``drv-<pid>-<n>.json``); in any mode, a
    launch Triton refused (OutOfResources: more shared memory or threads than the
    device has), as ``refused-<pid>-<n>.json`` with the reason."""
    original = compiled_kernel_cls._init_handles
    if getattr(original, "__irscope_wrapped__", False):
        return

    def _init_handles(self):
        fresh = getattr(self, "module", None) is None
        try:
            out = original(self)
        except BaseException as exc:  # re-raised below, unchanged
            if type(exc).__name__ == "OutOfResources":
                _report_refusal(self, exc)
            raise
        if gpu and fresh and getattr(self, "module", None) is not None:
            try:
                with _LOCK:
                    _DRV_SEQ[0] += 1
                    path = os.path.join(SPOOL, "drv-%d-%d.json" % (os.getpid(), _DRV_SEQ[0]))
                write_json_atomic(
                    path,
                    {
                        "hash": getattr(self, "hash", None),
                        "name": getattr(self, "name", None),
                        "n_regs": getattr(self, "n_regs", None),
                        "n_spills": getattr(self, "n_spills", None),
                        "n_max_threads": getattr(self, "n_max_threads", None),
                    },
                )
            except Exception:  # resource figures are optional: never break the user's kernel launch
                pass
        return out

    _init_handles.__irscope_wrapped__ = True  # type: ignore[attr-defined]  # marks the method wrapped once
    _init_handles.__wrapped__ = original  # type: ignore[attr-defined]  # Triton's own, for inspect.unwrap
    compiled_kernel_cls._init_handles = _init_handles


_REFUSED: set = set()  # hashes reported: Triton <= 3.1 tries to load again at each launch


def _report_refusal(kernel, exc):
    key = getattr(kernel, "hash", None)
    if key in _REFUSED:
        return
    _REFUSED.add(key)
    fake = sys.modules.get("irscope_fake_driver")
    try:
        with _LOCK:
            _DRV_SEQ[0] += 1
            path = os.path.join(SPOOL, "refused-%d-%d.json" % (os.getpid(), _DRV_SEQ[0]))
        write_json_atomic(path, {
            "hash": key,
            "name": getattr(kernel, "name", None),
            "type": type(exc).__name__,
            "message": str(exc),
            # inside a stand-in benchmark: an autotuner's config, which the autotuner prunes
            "benchmarking": bool(fake is not None and fake.benchmarking()),
        })
    except Exception:  # a report only: the user's launch fails with Triton's own error either way
        pass
