#!/bin/bash
# The CPU benchmarks on the device machine (the H200 host's CPU: 16 cores, quiet),
# for a second opinion on the dev VM's figures (docs/benchmarks.md, "device CPU").
# Results go to $OUT; docs/data/device-cpu/ holds the last ones.
#
# The device has Triton and torch but no network and no tritonparse, and it sets
# PYTHONDONTWRITEBYTECODE=1 (then every run compiles irscope's modules inside the
# timed sections: unset below). Carry a folder out/ab/ (run tool: carry ["out/ab"])
# made beforehand on the dev machine:
#   out/ab/site/        tritonparse from .venv's site-packages, with zstandard and
#                       orjson wheels for the device's Python (pip download
#                       --python-version 3.12 --only-binary=:all:), unzipped
#   out/ab/bi/          bench_index's bundles and traces (/tmp/irscope-bench-index/*)
#   out/ab/samples.irscope, out/ab/triton-3.6.irscope, out/ab/triton-3.9.irscope
#                       out/samples.irscope and out/bench_diff/*.irscope
# Usage on the device: bash benchmarks/device_cpu.sh [all|finals|model|open|diff]
# Benchmarks on the device machine's CPU (quiet, 16 cores): results under $OUT.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPATH=$PWD/out/ab/site
python3 -c "import irscope, irscope.core, irscope.ir.llvm, irscope.ir.mlir, irscope.ir.ptx, irscope.ir.sass, irscope.ir.mlir_loc, irscope.ir.types, irscope.ir.values, irscope.ir.layouts, irscope.ir.attributes, irscope.link.graph, irscope.link.provenance, irscope.irdiff.engine, irscope.cli.main, tritonparse.parse.trace_processor" || exit 1
python3 -m irscope diff out/ab/triton-3.6.irscope out/ab/triton-3.9.irscope --json > /dev/null
python3 --version; nproc; lscpu | grep "Model name"
what=${1:-all}
B=out/ab/bi
if [[ $what == all || $what == finals ]]; then
python3 benchmarks/bench_index.py --case "matmul_autotune --llvm-passes=$B/matmul_autotune_llvm.irscope:$B/tp_trace_matmul_autotune_llvm" \
  --case "flash_attention=$B/flash_attention.irscope:$B/tp_trace_flash_attention" --only-finals --finals-runs 15 --json $OUT/bench_index_finals.json 2>&1 | tail -3
fi
if [[ $what == all || $what == model ]]; then
python3 benchmarks/bench_model.py --bundle out/ab/samples.irscope --runs 15 --json $OUT/bench_model.json
fi
if [[ $what == all || $what == open ]]; then
python3 benchmarks/bench_api_open.py --bundle out/ab/samples.irscope --runs 15 --json $OUT/bench_api_open.json
fi
if [[ $what == all || $what == diff ]]; then
python3 benchmarks/bench_diff.py --old out/ab/triton-3.6.irscope --new out/ab/triton-3.9.irscope --runs 5 --json $OUT/bench_diff.json
fi
