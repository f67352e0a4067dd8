#!/usr/bin/env bash
# One device call for the bars still open when device time is scarce: the ticketed kernels'
# row tickets (tickets-go.sh: tests, then each launch per panel against cuSPARSE), the
# left product against cuSPARSE's best transposed product on scrm2504 and HLC (B = 1), and
# the 2-bit GEMV against the copy bandwidth (packed-go.sh with TESTS=kcla_test_packed
# CHECK=0 BASELINES=2-bit). Bundle: pack.sh --only kcla_test_grammar_multiply --only kcla
# --only kcla_bench_baselines --only kcla_test_packed with scrm2504.h5, EUR_subset.h5,
# mouse_hs1940.h5 and HLC.bed.xz/.bim.xz/.fam; copy this file in as go.sh and tickets-go.sh,
# packed-go.sh beside it:
#   bash BUNDLE/go.sh OUT
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"  # here, programs, libraries
out=$1
mkdir -p "$out"
echo "=== row tickets"
bash "$here/tickets-go.sh" "$out/tickets"
echo "=== left products, B = 1 (--transpose --compare --verify)"
data=$(mktemp -d)
stage_panels "$data"
"$here/bin/kcla" compress "$data/HLC.bed" -o "$data/HLC.h5" --threads 16 --quiet | head -1
for name in scrm2504 HLC; do
  for direction in right transpose; do
    flag=
    [ "$direction" = transpose ] && flag=--transpose
    # shellcheck disable=SC2086
    timeout 90 "$here/bin/kcla" multiply "$data/$name.h5" $flag --compare --verify --repeat 50 \
      > "$out/$name-$direction.txt" 2>&1
    echo "$name $direction: $(grep -E '^time' "$out/$name-$direction.txt" | head -1)"
    grep -E "best baseline|verify" "$out/$name-$direction.txt" | head -3
  done
done
echo "=== 2-bit GEMV"
TESTS=kcla_test_packed CHECK=0 BASELINES=2-bit bash "$here/packed-go.sh" "$out/packed" 2>&1 |
  grep -vE '^\s*$' | tail -40
