#!/usr/bin/env bash
# The automatic choices against the forms they choose between, on one GPU machine: the
# ticketed kernels' row tickets (kcla multiply --launch dataflow --row-tickets rows|chunks)
# and the left product's launch (--transpose, automatic against graph and dataflow), every
# product verified, with cuSPARSE's best in the same processes (--compare on the automatic
# runs). Bundle: pack.sh --only kcla_test_grammar_multiply --only kcla with scrm2504.h5,
# EUR_subset.h5, mouse_hs1940.h5 and HLC.bed.xz/.bim.xz/.fam; copy this file in as go.sh:
#   bash BUNDLE/go.sh OUT
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"  # here, programs, libraries
out=$1
mkdir -p "$out"
kcla=$here/bin/kcla
nvidia-smi --query-gpu=name --format=csv,noheader
data=$(mktemp -d)
stage_panels "$data"
timeout 120 "$here/bin/kcla_test_grammar_multiply" > "$out/grammar_multiply.log" 2>&1
echo "kcla_test_grammar_multiply rc=$? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' "$out/grammar_multiply.log" | tr '\n' ' ')"
grep -E "^\[  FAILED  \]" "$out/grammar_multiply.log" | head -8
"$kcla" compress "$data/HLC.bed" -o "$data/HLC.h5" --threads 16 --quiet | head -1
for name in scrm2504 HLC EUR_subset mouse_hs1940; do
  p=$data/$name.h5
  echo "-- $name"
  for direction in right transpose; do
    flag=
    [ "$direction" = transpose ] && flag=--transpose
    # shellcheck disable=SC2086
    timeout 90 "$kcla" multiply "$p" $flag --compare --verify --repeat 50 > "$out/$name-$direction.txt" 2>&1
    best=$(grep -E "cuSPARSE" "$out/$name-$direction.txt" | grep -v "op(A)=T" |
      sed -E 's/^ *(A\^T copy: )?cuSPARSE ([^ ]+) +([0-9.]+) ms.*/\3 \2/' | sort -n | head -1)
    echo "  $direction automatic: $(grep -E '^multiply' "$out/$name-$direction.txt" | sed -E 's/.*schedule //') $(time_of "$out/$name-$direction.txt") | cuSPARSE best $best"
  done
  for tickets in rows chunks; do
    timeout 60 "$kcla" multiply "$p" --schedule full_array --launch dataflow --row-tickets "$tickets" \
      --repeat 50 --verify --quiet > "$out/$name-dataflow-$tickets.txt" 2>&1
    echo "  right dataflow, $tickets: $(time_of "$out/$name-dataflow-$tickets.txt")"
  done
  timeout 60 "$kcla" multiply "$p" --schedule full_array --launch graph --repeat 50 --verify \
    --quiet > "$out/$name-graph.txt" 2>&1
  echo "  right graph: $(time_of "$out/$name-graph.txt")"
  for launch in graph dataflow; do
    timeout 60 "$kcla" multiply "$p" --transpose --launch $launch --repeat 50 --verify --quiet \
      > "$out/$name-T-$launch.txt" 2>&1
    echo "  left $launch: $(time_of "$out/$name-T-$launch.txt")"
  done
done
