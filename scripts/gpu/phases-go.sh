#!/usr/bin/env bash
# Level phases of the full-array sweep on the GPU machine (issue "single-vector gap").
# Copy into a bundle made by
#   pack.sh --only kcla_bench_baselines --only kcla_test_grammar_multiply
#           --only kcla_test_grammar_host --only kcla
#           --data scrm2504.h5 --data EUR_subset.h5 --data mouse_hs1940.h5
#           --data HLC.bed.xz --data HLC.bim.xz --data HLC.fam
# as go.sh, then: bash BUNDLE/go.sh OUT
# 1. kcla_test_grammar_multiply (merged full arrays in every typed test, on Cuda and Serial)
#    and kcla_test_grammar_host;
# 2. HLC compressed to a grammar with kcla compress;
# 3. kcla_bench_baselines at B = 1 (kcla, cuSPARSE, cuBLAS, 2-bit) with full arrays bounded to
#    1, PHASES (default 2,3,4,6) and 8 levels per phase, predicted next to measured;
# 4. the same at B = 64 (kcla, cuSPARSE, cuBLAS) unless B64=0.
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"  # here, programs, libraries
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
data=$(mktemp -d)
stage_panels "$data"
echo "== tests"
for t in kcla_test_grammar_multiply kcla_test_grammar_host; do
  timeout 120 "$here/bin/$t" > "$out/$t.log" 2>&1
  echo "$t rc=$? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/$t.log" | tr '\n' ' ')"
  grep -E "^\[  FAILED  \]|Failure" -A4 "$out/$t.log" | head -12
done
echo "== HLC grammar"
/usr/bin/time -f "%e s, %M KB" "$here/bin/kcla" compress "$data/HLC" -o "$data/HLC.h5" --threads 16 --quiet 2>&1 | tail -2
panels=("$data/scrm2504.h5" "$data/HLC.h5" "$data/EUR_subset.h5" "$data/mouse_hs1940.h5")
for p in "${panels[@]}"; do "$here/bin/kcla" info "$p" | grep -E "levels|GPU model"; done
echo "== B = 1"
timeout 240 "$here/bin/kcla_bench_baselines" --batch 1 --repeat 30 --energy-seconds 0 \
  --only kcla,cuSPARSE,cuBLAS,2-bit --phase-levels "${PHASES:-2,3,4,6}" \
  --tsv "$out/phases_b1.tsv" "${panels[@]}" > "$out/phases_b1.log" 2>&1
echo "rc=$?"
grep -vE "^\s*$" "$out/phases_b1.log" | grep -E "panel|kcla|best|^[A-Za-z/]" | head -120
if [ "${B64:-1}" = 1 ]; then
  echo "== B = 64"
  timeout 200 "$here/bin/kcla_bench_baselines" --batch 64 --repeat 10 --energy-seconds 0 \
    --only kcla,cuSPARSE,cuBLAS --phase-levels 4 \
    --tsv "$out/phases_b64.tsv" "${panels[@]}" > "$out/phases_b64.log" 2>&1
  echo "rc=$?"
  grep -E "auto|phases|best" "$out/phases_b64.log" | head -80
fi
