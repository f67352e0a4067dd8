#!/usr/bin/env bash
# A short GPU check for a session with little device time. Copy into a bundle made by
#   pack.sh --only kcla_test_packed --only kcla_test_grammar_multiply
#           --only kcla_test_foundation --only kcla_test_tlr --only kcla_bench_baselines
#           --data EUR_subset.h5 --data mouse_hs1940.h5
# as go.sh, then on the GPU machine: bash BUNDLE/go.sh OUT
# 1. the four test programs (every test typed over the back ends runs on Cuda and on the
#    host spaces), each under a time limit (KCLA_GPU_TIMEOUT, default 45 s);
# 2. the int8 tensor-core 2-bit GEMV over its replicas x warps grid on both panels
#    (kcla_bench_baselines --packed-sweep), with the other 2-bit kernels for reference.
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"  # here, programs, libraries
out=$1
limit=${KCLA_GPU_TIMEOUT:-45}
export KCLA_DATA_DIR=$here/data KCLA_TEST_FIXTURE_DIR=$here/fixtures
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
for t in kcla_test_packed kcla_test_grammar_multiply kcla_test_foundation kcla_test_tlr; do
  start=$SECONDS
  timeout "$limit" "$here/bin/$t" > "$out/$t.log" 2>&1
  rc=$?
  echo "$t rc=$rc $((SECONDS - start)) s $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/$t.log" | tr '\n' ' ')"
  grep -E "^\[  FAILED  \]|Failure|error" "$out/$t.log" | head -8
done
timeout "$limit" "$here/bin/kcla_bench_baselines" --batch 1 --repeat 5 --energy-seconds 0 \
  --only 2-bit --packed-sweep "$here/data/EUR_subset.h5" "$here/data/mouse_hs1940.h5" \
  > "$out/packed_sweep.log" 2>&1
echo "kcla_bench_baselines rc=$?"
grep -v "^$" "$out/packed_sweep.log" | tail -40
