#!/usr/bin/env bash
# The whole test suite (CI runs exactly this). Quick subset: scripts/test.sh -m "not slow"
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m pytest -q "$@"
