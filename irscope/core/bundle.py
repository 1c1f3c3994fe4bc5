"""A bundle opened for reading through the core API: captures, runs, selection.

Safe from several threads: SQLite connections must not be shared between
threads, so each thread that reads gets its own read-only connection (and its own
pack cache), opened on its first read. The listing is read once and shared.
"""

from __future__ import annotations

import threading
from typing import Iterator

from irscope.core.capture import Capture, Run
from irscope.errors import IrscopeError
from irscope.store.bundle import Bundle as StoreBundle
from irscope.core.selection import select_capture


class Bundle:
    """An irscope bundle, read-only. Use :func:`irscope.open`; close it (or use ``with``)."""

    def __init__(self, path: str):
        self.path = path
        self._local = threading.local()
        self._lock = threading.Lock()
        self._opened: list[StoreBundle] = []
        self._captures: list[Capture] | None = None
        self._runs: dict[int, Run] | None = None
        self._store()  # open now, so a bad path fails here with a one-line error

    def _store(self) -> StoreBundle:
        """This thread's connection (opened on its first read)."""
        store = getattr(self._local, "store", None)
        if store is None:
            with self._lock:
                store = self._store_unlocked()
        return store

    def close(self) -> None:
        """Close every thread's connection."""
        with self._lock:
            for store in self._opened:
                store.close()
            self._opened.clear()
        self._local = threading.local()

    def __enter__(self) -> "Bundle":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<irscope.Bundle {self.path!r}>"

    # -- listing -------------------------------------------------------------
    def captures(self, kernel: str | None = None) -> list[Capture]:
        """Every capture in capture order; optionally one kernel's."""
        with self._lock:
            if self._captures is None:
                rows = self._store_unlocked().captures()
                self._captures = [Capture(self, r) for r in rows]
            caps = self._captures
        return [c for c in caps if kernel is None or c.kernel == kernel]

    def _store_unlocked(self) -> StoreBundle:
        # _store() takes self._lock to record a new connection; callers holding it use this.
        store = getattr(self._local, "store", None)
        if store is None:
            store = StoreBundle.open(self.path)
            self._local.store = store
            self._opened.append(store)
        return store

    def __iter__(self) -> Iterator[Capture]:
        return iter(self.captures())

    def __len__(self) -> int:
        return len(self.captures())

    def kernels(self) -> list[str]:
        """Kernel names, in order of first capture."""
        return list(dict.fromkeys(c.kernel for c in self.captures()))

    def capture(self, kernel: str | None = None, target: str | None = None,
                variant: str | int | None = None) -> Capture:
        """The capture named by kernel (or ``#id``), target (``sm_90``, ``sm90``, ``90``,
        ``gfx942``) and variant (a label, a unique prefix of one, or its index among the
        kernel's variants), by the rule of :mod:`irscope.core.selection` that every
        command shares. Without target and variant: the kernel's first capture.
        IrscopeError (one line) when none matches, or when a spelling fits several."""
        return select_capture(self.captures(), self.path, kernel, target, variant)

    def runs(self) -> list[Run]:
        """Every capture run, oldest first."""
        with self._lock:
            if self._runs is None:
                self._runs = {r["id"]: Run.from_row(r) for r in self._store_unlocked().runs()}
            return list(self._runs.values())

    def run(self, run_id: int) -> Run:
        """One run by id."""
        for r in self.runs():
            if r.id == run_id:
                return r
        raise IrscopeError(f"no run {run_id} in {self.path}")

    @property
    def raw_bytes(self) -> int:
        """Bytes of IR text captured, before dedup and compression."""
        return sum(c.raw_bytes for c in self.captures())

    def stored_bytes(self) -> int:
        """Bytes the compressed texts take on disk."""
        return self._store().stored_bytes()


def open_bundle(path: str) -> Bundle:
    """Open the bundle at ``path`` for reading. IrscopeError (one line) when it is
    missing, not a bundle, or unreadable."""
    return Bundle(path)
