#!/usr/bin/env bash
# Runs a bundle made by pack.sh on the GPU machine.
#   bash run.sh OUTDIR [test|bench|all] [BENCH_FILTER]
# Environment: KCLA_BENCH_ARGS (extra benchmark flags, e.g. --kcla_matrix=...),
# KCLA_GPU_TIMEOUT (seconds per program, default 300).
# Writes OUTDIR/summary.txt (what ran, pass/fail, timings) and OUTDIR/results.tar.gz
# (every log, the gtest XML and the benchmark JSON).
set -uo pipefail
bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
outdir=${1:?usage: run.sh OUTDIR [test|bench|all] [BENCH_FILTER]}
what=${2:-all}
bench_filter=${3:-.}
mkdir -p "$outdir"
work=$(mktemp -d)
if [ -f "$bundle/payload.tar.xz" ]; then
  unpacked=$(mktemp -d)
  tar -C "$unpacked" -xJf "$bundle/payload.tar.xz"
  cp -r "$bundle/data" "$unpacked/" 2>/dev/null || true
  cp -r "$bundle/fixtures" "$unpacked/" 2>/dev/null || true
  bundle=$unpacked
fi
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}"
export KCLA_DATA_DIR="$bundle/data"
export KCLA_TEST_FIXTURE_DIR="$bundle/fixtures"
export CUDA_LAUNCH_BLOCKING=${CUDA_LAUNCH_BLOCKING:-0}
summary="$outdir/summary.txt"
bench_args=${KCLA_BENCH_ARGS:-}
bench_args=${bench_args//@DATA@/$bundle/data}  # @DATA@ names the bundle's data folder
limit=${KCLA_GPU_TIMEOUT:-300}  # seconds per program: a hang must not eat the lease
{
  echo "kcla GPU run $(date -u +%FT%TZ) on $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader 2>&1
} > "$summary"
status=0
if [ "$what" = test ] || [ "$what" = all ]; then
  for t in "$bundle"/bin/kcla_test_*; do
    name=$(basename "$t")
    start=$(date +%s.%N)
    timeout "$limit" "$t" --gtest_output="xml:$work/$name.xml" > "$work/$name.log" 2>&1
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
    # shellcheck disable=SC2086
    timeout "$limit" "$b" --benchmark_filter="$bench_filter" --benchmark_out="$work/$name.json" \
      --benchmark_out_format=json --benchmark_counters_tabular=true ${bench_args} \
      > "$work/$name.log" 2>&1
    rc=$?
    echo "$name rc=$rc" >> "$summary"
    sed -n '/^==== /,$p' "$work/$name.log" >> "$summary"
    [ $rc -eq 0 ] || status=1
  done
fi
if [ "$what" = all ] || [ "$what" = cli ]; then
  # The command-line tool end to end: demo, then every grammar in data/ verified.
  timeout "$limit" "$bundle/bin/kcla" demo > "$work/kcla_demo.log" 2>&1
  echo "kcla demo rc=$?" >> "$summary"
  tail -8 "$work/kcla_demo.log" >> "$summary"
  for f in "$bundle"/data/*.h5; do
    [ -f "$f" ] || continue
    for b in 1 64; do
      timeout "$limit" "$bundle/bin/kcla" multiply "$f" --batch "$b" --verify > "$work/multiply_$(basename "$f" .h5)_$b.log" 2>&1
      rc=$?
      echo "kcla multiply $(basename "$f") --batch $b --verify rc=$rc" >> "$summary"
      cat "$work/multiply_$(basename "$f" .h5)_$b.log" >> "$summary"
      [ $rc -eq 0 ] || status=1
    done
  done
fi
tar -C "$work" -czf "$outdir/results.tar.gz" .
rm -rf "$work"
cat "$summary"
exit $status
