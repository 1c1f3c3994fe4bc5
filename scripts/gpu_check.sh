#!/usr/bin/env bash
# GPU verification (CI has no GPU): run on a machine whose python3 has torch and
# Triton and sees an NVIDIA GPU. Writes everything under $OUT (default out/gpu):
#  - every sample kernel run plainly (numeric check against torch),
#  - `irscope run` of each in real-GPU mode (launches executed, registers and
#    spills from the driver) and in compile-only mode (--target sm_90),
#  - a torch.compile model whose Inductor kernels must all be captured,
#  - a comparison of the two captures (TTGIR text and register counts).
# Results are summarised in docs/gpu-check.md.
set -u
OUT=${OUT:-out/gpu}
PY=${PYTHON:-python3}
mkdir -p "$OUT/logs"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
{ $PY -c "import torch, triton, sys; print('python', sys.version.split()[0]); print('torch', torch.__version__); print('triton', triton.__version__); print('gpu', torch.cuda.get_device_name())"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$OUT/env.txt" 2>&1
: > "$OUT/summary.txt"
for s in sample_kernels/*.py; do
  n=$(basename "$s" .py)
  $PY "$s" > "$OUT/logs/plain_$n.log" 2>&1; echo "$n plain rc=$? $(tail -n1 "$OUT/logs/plain_$n.log")" >> "$OUT/summary.txt"
  $PY -m irscope run "$s" --no-open -o "$OUT/gpu.irscope" > "$OUT/logs/gpu_$n.log" 2>&1; echo "$n irscope-gpu rc=$?" >> "$OUT/summary.txt"
  $PY -m irscope run "$s" --no-open --target sm_90 -o "$OUT/compile_only.irscope" -q > /dev/null 2> "$OUT/logs/co_$n.log"; echo "$n irscope-compile-only rc=$?" >> "$OUT/summary.txt"
done
$PY -m irscope run scripts/torch_compile_model.py --no-open -o "$OUT/torch_compile.irscope" > "$OUT/logs/torch_compile.log" 2>&1
echo "torch_compile irscope rc=$?" >> "$OUT/summary.txt"
for b in gpu compile_only torch_compile; do $PY -m irscope ls "$OUT/$b.irscope" --json > "$OUT/ls_$b.json" 2>>"$OUT/summary.txt"; done
$PY scripts/compare_captures.py "$OUT/gpu.irscope" "$OUT/compile_only.irscope" --json "$OUT/compare.json" > "$OUT/compare.txt" 2>&1
echo "compare rc=$?" >> "$OUT/summary.txt"
cat "$OUT/summary.txt" "$OUT/compare.txt"
