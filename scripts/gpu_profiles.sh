#!/usr/bin/env bash
# Makes the real GPU profiles that tests/data/profiles/ holds (CI has no GPU).
# Run on a machine whose python3 has torch and Triton, with `ncu` on PATH and an
# NVIDIA GPU: `OUT=out/profiles bash scripts/gpu_profiles.sh`. For each kernel script
# it writes under $WORK/<name>/ (WORK defaults to /tmp/irscope_gpu_profiles, so that
# $OUT holds only the tarballs: a lent machine returns at most 8 files):
#   gpu.irscope          `irscope run` of the script on the GPU (the capture profiled)
#   report.ncu-rep       `ncu --set full --import-source yes` of its first launches
#   sass.csv             `ncu -i report.ncu-rep --page source --csv --print-source sass`
#   cuda.csv             the same with --print-source cuda (Nsight Compute's own per-line view)
#   proton.hatchet       Proton PC sampling of the script (irscope/capture/child/irscope_proton.py, as `irscope run --profile` runs it)
# and $WORK/env.txt (GPU, driver, tool versions). All but the reports end in
# $OUT/profiles.tar.gz; each report in $OUT/reports_<name>.tar.gz.
set -u
DEST=${OUT:-out/profiles}
OUT=${WORK:-/tmp/irscope_gpu_profiles}
mkdir -p "$DEST"
PY=${PYTHON:-python3}
LAUNCHES=${LAUNCHES:-6}
SCRIPTS=${SCRIPTS:-"vector_add fused_softmax jit_helper_call layer_norm flash_attention matmul_autotune"}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
{
  $PY -c "import torch, triton, sys; print('python', sys.version.split()[0]); print('torch', torch.__version__); print('triton', triton.__version__); print('gpu', torch.cuda.get_device_name())"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  ncu --version | tail -n1
  date -u +%Y-%m-%dT%H:%M:%SZ
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
for n in $SCRIPTS; do
  s=sample_kernels/$n.py
  d=$OUT/$n
  mkdir -p "$d"
  t0=$(date +%s)
  timeout 240 $PY -m irscope run "$s" --no-open -q -o "$d/gpu.irscope" > "$d/run.log" 2>&1
  echo "$n irscope-run rc=$? $(( $(date +%s) - t0 ))s"
  t0=$(date +%s)
  timeout 300 ncu --set full --clock-control none --import-source yes -c "$LAUNCHES" -f -o "$d/report" $PY "$s" > "$d/ncu.log" 2>&1
  echo "$n ncu rc=$? $(( $(date +%s) - t0 ))s"
  ncu -i "$d/report.ncu-rep" --page source --csv --print-source sass > "$d/sass.csv" 2> "$d/sass.err"
  echo "$n export-sass rc=$? $(wc -l < "$d/sass.csv") lines"
  ncu -i "$d/report.ncu-rep" --page source --csv --print-source cuda --resolve-source-file "$PWD/$s" > "$d/cuda.csv" 2> "$d/cuda.err"
  echo "$n export-cuda rc=$? $(wc -l < "$d/cuda.csv") lines"
  ncu -i "$d/report.ncu-rep" --page details --csv > "$d/details.csv" 2> /dev/null
  ncu -i "$d/report.ncu-rep" --page raw --csv > "$d/raw.csv" 2> /dev/null
  t0=$(date +%s)
  timeout 200 $PY irscope/capture/child/irscope_proton.py "$d/proton" "$d/proton_info.json" "$s" > "$d/proton.log" 2>&1
  echo "$n proton rc=$? $(( $(date +%s) - t0 ))s $(ls "$d" | tr '\n' ' ')"
  # After each script, so a run stopped at its time limit still returns what it made.
  # The .ncu-rep reports go in a tarball of their own: a returned file is at most 16 MiB.
  tar czf "$DEST/profiles.tar.gz.part" -C "$OUT" --exclude='*.tar.gz*' --exclude='*.ncu-rep' . && mv "$DEST/profiles.tar.gz.part" "$DEST/profiles.tar.gz"
  tar czf "$DEST/reports_$n.tar.gz" -C "$OUT" "$n/report.ncu-rep"
done
ls -la "$DEST" "$OUT"/*
