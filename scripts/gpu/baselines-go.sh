#!/usr/bin/env bash
# Runs kcla_bench_baselines of a bundle made by pack.sh (copy this file into the bundle as
# go.sh) on every grammar in the bundle's data folder, or on the files named. On the GPU
# machine:
#   bash BUNDLE/go.sh OUT [FILE.h5 ...]
# BATCH (default 64), REPEAT (default 50), ENERGY_SECONDS (default 1), BENCH_TIMEOUT
# (seconds, default 540). Writes OUT/baselines.log and OUT/baselines.tsv; the tables print
# on stdout.
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"  # here, programs, libraries
out=$1; shift
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,power.draw --format=csv,noheader | tee "$out/gpu.txt"
files=("$@")
[ ${#files[@]} -gt 0 ] || files=("$here"/data/*.h5)
timeout "${BENCH_TIMEOUT:-540}" "$here/bin/kcla_bench_baselines" --batch "${BATCH:-64}" \
  --repeat "${REPEAT:-50}" --energy-seconds "${ENERGY_SECONDS:-1}" --tsv "$out/baselines.tsv" \
  "${files[@]}" 2>&1 | tee "$out/baselines.log"
echo "kcla_bench_baselines rc=${PIPESTATUS[0]}"
