#!/usr/bin/env bash
# Runs a bundle made by pack.sh on the GPU machine.
#   bash run.sh OUTDIR [test|bench|all] [BENCH_FILTER]
# Writes OUTDIR/summary.txt (what ran, pass/fail, timings) and OUTDIR/results.tar.gz
# (every log, the gtest XML and the benchmark JSON).
set -uo pipefail
bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
outdir=${1:?usage: run.sh OUTDIR [test|bench|all] [BENCH_FILTER]}
what=${2:-all}
bench_filter=${3:-.}
mkdir -p "$outdir"
work=$(mktemp -d)
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}"
export KCLA_DATA_DIR="$bundle/data"
export CUDA_LAUNCH_BLOCKING=${CUDA_LAUNCH_BLOCKING:-0}
summary="$outdir/summary.txt"
{
  echo "kcla GPU run $(date -u +%FT%TZ) on $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader 2>&1
} > "$summary"
status=0
if [ "$what" = test ] || [ "$what" = all ]; then
  for t in "$bundle"/bin/kcla_test_*; do
    name=$(basename "$t")
    start=$(date +%s.%N)
    "$t" --gtest_output="xml:$work/$name.xml" > "$work/$name.log" 2>&1
    rc=$?
    end=$(date +%s.%N)
    passed=$(grep -c "^\[       OK \]" "$work/$name.log")
    failed=$(grep -c "^\[  FAILED  \]" "$work/$name.log")
    printf "%-32s rc=%d passed=%d failed-lines=%d %ss\n" "$name" "$rc" "$passed" "$failed" \
      "$(awk "BEGIN{printf \"%.1f\", $end - $start}")" >> "$summary"
    [ $rc -eq 0 ] || { status=1; grep -E "FAILED|Failure|error" "$work/$name.log" | head -20 >> "$summary"; }
  done
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  for b in "$bundle"/bin/kcla_bench_*; do
    name=$(basename "$b")
    "$b" --benchmark_filter="$bench_filter" --benchmark_out="$work/$name.json" \
      --benchmark_out_format=json --benchmark_counters_tabular=true > "$work/$name.log" 2>&1
    rc=$?
    echo "$name rc=$rc" >> "$summary"
    [ $rc -eq 0 ] || status=1
  done
fi
tar -C "$work" -czf "$outdir/results.tar.gz" .
rm -rf "$work"
cat "$summary"
exit $status
