#!/usr/bin/env bash
# Runs the biobank-scale checks of a bundle made by pack.sh (copy this file into the
# bundle as go.sh) on the GPU machine:
#   bash BUNDLE/go.sh OUT [kcla_bench_blocks arguments...]
# First the block-grammar tests on the device (kcla_test_block_grammar), then
# kcla_bench_blocks with the arguments given (peak RSS by /usr/bin/time when present).
# TESTS=0 skips the tests; BENCH_TIMEOUT (seconds, default 560) bounds the bench.
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"  # here, programs, libraries
out=$1; shift
export KCLA_TEST_FIXTURE_DIR="$here/fixtures"
mkdir -p "$out"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader
  echo "cores $(nproc); $(free -g | awk '/Mem:/{print $2}') GiB; disk $(df -h . | awk 'NR==2{print $4}') free"
  echo "mpirun: $(command -v mpirun || echo none)"
} | tee "$out/machine.txt"
if [ "${TESTS:-1}" != 0 ]; then
  for t in "$here"/bin/kcla_test_*; do
    timeout 300 "$t" > "$out/$(basename "$t").log" 2>&1
    echo "$(basename "$t") rc=$? $(grep -c '^\[       OK \]' "$out/$(basename "$t").log") passed"
    grep -E "^\[  FAILED|Failure" "$out/$(basename "$t").log" | head -10
  done
fi
if [ $# -gt 0 ]; then
  timer=()
  [ -x /usr/bin/time ] && timer=(/usr/bin/time -v -o "$out/bench_time.txt")
  timeout "${BENCH_TIMEOUT:-560}" "${timer[@]}" "$here/bin/kcla_bench_blocks" "$@" 2>&1 |
    tee "$out/bench_blocks.log"
  echo "kcla_bench_blocks rc=${PIPESTATUS[0]}"
  [ -f "$out/bench_time.txt" ] && grep -E "Maximum resident|Elapsed|Percent of CPU" "$out/bench_time.txt"
fi
