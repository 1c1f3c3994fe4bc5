"""Two whole bundles compared pair by pair, the pairs spread over worker processes.

Each pair's comparison (parse every stage of both captures, def-use, align) is
pure Python and independent of the others, so ``irscope diff A.irscope
B.irscope`` runs them in a process pool: on two cores the dozen pairs of the
samples take a little over half the time of one process. A worker opens the two
bundles itself (an SQLite connection must not cross a fork) and returns plain
results, in the pairs' order.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from irscope.core import Bundle
from irscope.errors import IrscopeError
from irscope.diff.compare import change_counts
from irscope.diff.pairing import CapturePair, PairSummary, summarise_pair

_MAX_JOBS = 8


def default_jobs(pairs: int) -> int:
    """Worker processes for ``pairs`` pairs: one per CPU this process may use, at
    most one per pair and eight in all."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, pairs, _MAX_JOBS))


def compare_pairs(pairs: list[CapturePair], stages: tuple[str, ...] | None = None,
                  jobs: int | None = None) -> list[tuple[PairSummary, dict[str, int]]]:
    """(:func:`summarise_pair`, :func:`change_counts`) of every pair, in order;
    ``jobs`` worker processes (None: :func:`default_jobs`; 1: in this process)."""
    jobs = default_jobs(len(pairs)) if jobs is None else max(1, jobs)
    if jobs == 1 or len(pairs) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [(summarise_pair(p), change_counts(p.a, p.b, stages)) for p in pairs]
    tasks = [(p.a.bundle.path, p.a.id, p.b.bundle.path, p.b.id, p.differs, stages) for p in pairs]
    # The biggest pairs first, so no worker is left with one at the end.
    order = sorted(range(len(pairs)), key=lambda i: -(pairs[i].a.raw_bytes or 0) - (pairs[i].b.raw_bytes or 0))
    # fork: the workers start with irscope imported, in milliseconds.
    try:
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            futures = {i: pool.submit(_compare_one, tasks[i]) for i in order}
            return [futures[i].result() for i in range(len(pairs))]
    except BrokenProcessPool:  # a worker killed (out of memory, a signal): do it here instead
        return compare_pairs(pairs, stages, jobs=1)


_open: dict[str, Bundle] = {}  # per worker process: each bundle opened once


def _capture(path: str, capture_id: int):
    b = _open.get(path)
    if b is None:
        b = _open[path] = Bundle(path)
    for c in b.captures():
        if c.id == capture_id:
            return c
    raise IrscopeError(f"{path}: capture {capture_id} is gone (the bundle changed while it was compared)")


def _compare_one(task) -> tuple[PairSummary, dict[str, int]]:
    path_a, id_a, path_b, id_b, differs, stages = task
    pair = CapturePair(_capture(path_a, id_a), _capture(path_b, id_b), differs)
    return summarise_pair(pair), change_counts(pair.a, pair.b, stages)
