#!/usr/bin/env bash
# The ticketed kernels' one-team-per-row tickets on the GPU machine (issue "single-vector
# gap"): kcla_test_grammar_multiply, then per panel the automatic product and the graph,
# fused and dataflow launches (every product verified against CSR). Copy into a bundle made
# by pack.sh --only kcla_test_grammar_multiply --only kcla (four panels as for
# rowchunk-go.sh) as go.sh, then: bash BUNDLE/go.sh OUT
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"
out=$1; mkdir -p "$out"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
data=$(mktemp -d); stage_panels "$data"
timeout 90 "$here/bin/kcla_test_grammar_multiply" > "$out/grammar_multiply.log" 2>&1
echo "kcla_test_grammar_multiply rc=$? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' "$out/grammar_multiply.log" | tr '\n' ' ')"
grep -E "^\[  FAILED  \]|Failure" -A4 "$out/grammar_multiply.log" | head -16
"$here/bin/kcla" compress "$data/HLC" -o "$data/HLC.h5" --threads 16 --quiet > /dev/null 2>&1
for name in ${PANELS:-scrm2504 HLC EUR_subset mouse_hs1940}; do
  p=$data/$name.h5
  echo "-- $name"
  timeout 120 "$here/bin/kcla" multiply "$p" --compare --repeat 50 --verify > "$out/$name-right.txt" 2>&1
  echo "automatic: $(grep -E '^time|schedule' "$out/$name-right.txt" | head -2 | sed 's/ per vector.*//' | tr '\n' ' ')"
  grep -E "cuSPARSE" "$out/$name-right.txt" | sed -E 's/.*cuSPARSE ([^:]*)[: ]+([0-9.]+) ms.*/\2 \1/' | sort -n | head -1
  for launch in graph fused dataflow; do
    t=$(timeout 60 "$here/bin/kcla" multiply "$p" --schedule full_array --launch $launch --repeat 50 --verify --quiet 2>&1 | grep -E "^time|verify" | sed -E 's/ per product.*//; s/.*relative error vs CSR product ([0-9.e-]+).*(OK|FAIL).*/\1 \2/' | tr '\n' ' ')
    echo "  $launch: $t"
  done
done
