#!/usr/bin/env bash
# Runs the TLR tests and benchmarks of a bundle made by pack.sh (copy this file into the
# bundle as go.sh). On the GPU machine:
#   bash BUNDLE/go.sh OUT [tests] [parity] [fp16] [kblas] [variants]
# FILTER=REGEX selects benchmarks; TEST_TIMEOUT / BENCH_TIMEOUT / KBLAS_TIMEOUT (seconds)
# bound each program (VARIANTS_TIMEOUT for variants). Logs, gtest XML and benchmark JSON go to OUT; the tables and the
# phase trace print on stdout.
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"  # here, programs, libraries
out=$1; shift
# pack.sh ships the programs xz-compressed.
export OMP_PROC_BIND=false
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader | tee "$out/gpu.txt"
for what in "$@"; do
  start=$(date +%s.%N)
  case "$what" in
    tests) timeout "${TEST_TIMEOUT:-90}" "$here/bin/kcla_test_tlr" --gtest_output="xml:$out/test_tlr.xml" > "$out/test_tlr.log" 2>&1
           echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED|Failure|error|Which is|Expected|actual" "$out/test_tlr.log" | head -40 ;;
    parity|fp16|kblas|variants)
      limit=${BENCH_TIMEOUT:-90}
      [ "$what" = kblas ] && limit=${KBLAS_TIMEOUT:-150}
      [ "$what" = variants ] && limit=${VARIANTS_TIMEOUT:-400}
      timeout "$limit" "$here/bin/kcla_bench_tlr_$what" --benchmark_out="$out/$what.json" --benchmark_out_format=json \
        --benchmark_counters_tabular=true ${FILTER:+--benchmark_filter=$FILTER} > "$out/$what.log" 2>&1
      echo "$what rc=$?"; grep -E "^Benchmark|^tlr_|summary|rror|^\[" "$out/$what.log" ;;
  esac
  echo "[$what: $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $start}") s]"
done
