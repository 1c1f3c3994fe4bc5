#!/usr/bin/env bash
# The whole test suite (CI runs exactly this). Quick subset: scripts/test.sh -m "not slow"
set -euo pipefail
cd "$(dirname "$0")/.."
# Two workers (CI has 2 cores; most tests wait on compiler subprocesses), one test
# file per worker so module fixtures (captured bundles) are built once. Files start in
# the order tests/conftest_order.py gives (longest first), which xdist keeps with
# --no-loadscope-reorder instead of its own most-tests-first.
exec .venv/bin/python -m pytest -q -n "${IRSCOPE_TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder "$@"
