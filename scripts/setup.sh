#!/usr/bin/env bash
# One command from a fresh clone: system packages, Python environments, then the
# main job (capture every sample kernel with no GPU and print the summary).
#   .venv               irscope + Triton 3.6 + torch 2.13 (CPU) + test tools
#   .venvs/triton-3.2   Triton 3.2 + torch, for `--python` and the version tests
#   .venvs/triton-3.9   Triton 3.9 + torch
#   .venvs/triton-3.0   Triton 3.0 + torch: the oldest autotuner (tests/test_versions.py)
# Re-running it is cheap: finished steps are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
TORCH=${IRSCOPE_TORCH:-torch==2.13.0}

# System tools: Graphviz's dot (irscope export/layout), tmux (the terminal
# end-to-end test of irscope open), Chromium (the HTML report's browser tests).
missing=""
command -v dot >/dev/null 2>&1 || missing="$missing graphviz"
command -v tmux >/dev/null 2>&1 || missing="$missing tmux"
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
if [ -n "$missing" ]; then
  echo "== installing system packages:$missing"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

pip_q() { "$1/bin/python" -m pip install -q --disable-pip-version-check "${@:2}" 2>&1 | grep -v "is ignored: it is neither" || true; }

# editable_mode=compat: a plain path entry in a .pth; the default editable mode
# installs an import finder that costs every irscope command ~20-40 ms at start-up
# (it loads pathlib, urllib and more before main() runs).
if [ ! -x .venv/bin/irscope ] || [ pyproject.toml -nt .venv/.irscope-installed ] \
    || ls .venv/lib/python3*/site-packages/__editable___irscope_*_finder.py >/dev/null 2>&1; then
  echo "== .venv: irscope with Triton 3.6"
  [ -d .venv ] || $PY -m venv .venv
  pip_q .venv "$TORCH" "triton==3.6.0" -e ".[capture,test]" --config-settings editable_mode=compat
  .venv/bin/python -c "import irscope, triton, torch, textual" && touch .venv/.irscope-installed
fi
for v in 3.2.0 3.9.0 3.0.0; do
  d=.venvs/triton-${v%.0}
  if [ ! -f "$d/.installed" ]; then
    echo "== $d"
    mkdir -p .venvs; [ -d "$d" ] || $PY -m venv "$d"
    pip_q "$d" "$TORCH" "triton==$v" "numpy<2.4"
    "$d/bin/python" -c "import triton, torch" && touch "$d/.installed"
  fi
done

echo "== capturing the sample kernels (compile-only, no GPU needed)"
mkdir -p out
rm -f out/samples.irscope
for s in sample_kernels/*.py; do
  .venv/bin/irscope run "$s" -o out/samples.irscope -q --no-open >/dev/null || { echo "capture of $s failed"; exit 1; }
done
.venv/bin/irscope ls out/samples.irscope
