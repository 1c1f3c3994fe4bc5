"""The order test files start in, so that the two xdist workers finish together.

scripts/test.sh runs one file per worker (``--dist loadfile``), handing the next file to
whichever worker is free. xdist's own order is most-tests-first, which leaves files of
one or three long tests (compiling real kernels under several Tritons) to the end, where
one worker runs them while the other has nothing left. The files below take longest,
measured with ``--durations`` on CI's two cores; they start first, longest first. The
other files that compile real kernels (a test marked slow) follow, then the quick
files, most tests first within each group. scripts/test.sh passes ``--no-loadscope-reorder`` so
that xdist keeps this order. The order changes no result: each file's tests keep their
own order, and no test depends on another file's.
"""

from __future__ import annotations

from collections import Counter

import pytest

LONGEST_FIRST = (
    "test_coverage_samples.py",  # builds the shared samples bundle: three Tritons, two targets
    "test_capture_real_code.py",
    "test_capture_cli.py",
    "test_summary_selection.py",
    "test_versions.py",
    "test_whatif_repro.py",
    "test_pass_steps.py",
    "test_user_env.py",
    "test_capture_failures.py",
    "test_replay.py",
    "test_loops.py",
    "test_bundle_fuzz.py",
    "test_remarks.py",
    "test_tune.py",
    "test_tune_crash.py",
    "test_tritonparse_agreement.py",
    "test_link_provenance.py",
    "test_link_stages.py",
    "test_tui_tmux.py",
    "test_worker_capture.py",
    "test_gpu_fixture.py",
    "test_store_concurrency.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Long files first (``LONGEST_FIRST``), then files with slow tests, then the rest,
    most tests first within each; stable, so each file's tests stay together and in order."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    tests_in = Counter(item.nodeid.split("::")[0] for item in items)
    slow = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow")}

    def key(item: pytest.Item) -> tuple[int, int, int]:
        path = item.nodeid.split("::")[0]
        return rank.get(path.rsplit("/", 1)[-1], len(rank)), path not in slow, -tests_in[path]

    items.sort(key=key)
