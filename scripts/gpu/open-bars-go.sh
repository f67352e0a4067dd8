#!/usr/bin/env bash
# One device call for every bar still open on the single GPU (issues 11, 13, 14), when device
# time is scarce: choices-go.sh (tests; right and left products of the four panels against
# cuSPARSE's best, every automatic choice against the forms it chooses between), B = 64
# against cuSPARSE SpMM, dense cuBLAS and the 2-bit kernels (bench, no energy), and the 2-bit
# GEMV against the copy bandwidth (packed-go.sh with TESTS=kcla_test_packed CHECK=0
# BASELINES=2-bit), and the genotype operators over block grammars (kcla_test_genotype; HLC
# compressed in column blocks: left product verified, PCA next to the single grammar's).
# Bundle: pack.sh --only kcla_test_grammar_multiply --only kcla --only kcla_test_genotype
# --only kcla_bench_baselines --only kcla_test_packed with scrm2504.h5, EUR_subset.h5,
# mouse_hs1940.h5 and HLC.bed.xz/.bim.xz/.fam; copy this file in as go.sh and
# choices-go.sh, packed-go.sh beside it:
#   bash BUNDLE/go.sh OUT
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"  # here, programs, libraries
out=$1
mkdir -p "$out"
# PART=1: choices, slot order, layered and fused; PART=2: the rest (default: both, which may
# pass one device call's 10 minutes).
part=${PART:-all}
if [ "$part" != 2 ]; then
echo "=== choices (B = 1)"
bash "$here/choices-go.sh" "$out/choices"
fi
data=$(mktemp -d)
stage_panels "$data"
"$here/bin/kcla" compress "$data/HLC.bed" -o "$data/HLC.h5" --threads 16 --quiet | head -1
if [ "$part" != 2 ]; then
echo "=== first-use slot order (automatic launch; rule order in choices above)"
for name in scrm2504 HLC EUR_subset mouse_hs1940; do
  for flag in "" --transpose; do
    # shellcheck disable=SC2086
    timeout 60 "$here/bin/kcla" multiply "$data/$name.h5" $flag --slot-order first_use \
      --repeat 50 --verify --quiet > "$out/$name-first-use$flag.txt" 2>&1
    echo "  $name ${flag:-right}: $(time_of "$out/$name-first-use$flag.txt")"
  done
done
echo "=== layered and fused (the cost model's other forms; every run prints its prediction)"
for name in scrm2504 HLC EUR_subset mouse_hs1940; do
  for form in "--schedule layered" "--schedule full_array --launch fused"; do
    # shellcheck disable=SC2086
    timeout 60 "$here/bin/kcla" multiply "$data/$name.h5" $form --repeat 50 --verify --quiet \
      > "$out/$name-${form##* }.txt" 2>&1
    echo "  $name $form: $(time_of "$out/$name-${form##* }.txt")"
  done
done
fi
[ "$part" = 1 ] && exit 0
echo "=== B = 64 per product (kcla, cuSPARSE, cuBLAS, 2-bit)"
timeout 240 "$here/bin/kcla_bench_baselines" --batch 64 --repeat 20 --energy-seconds 0 \
  --only kcla,cuSPARSE,cuBLAS,2-bit --tsv "$out/batch64.tsv" \
  $(for p in scrm2504 mouse_hs1940 HLC EUR_subset; do [ -f "$data/$p.h5" ] && echo "$data/$p.h5"; done) \
  > "$out/batch64.log" 2>&1
echo "kcla_bench_baselines --batch 64 rc=$?"
grep -E "^===|summary|best " "$out/batch64.log" | head -40
echo "=== genotype operators over block grammars (kcla_test_genotype; HLC in column blocks)"
timeout 120 "$here/bin/kcla_test_genotype" > "$out/genotype.log" 2>&1
echo "kcla_test_genotype rc=$? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' "$out/genotype.log" | tr '\n' ' ')"
"$here/bin/kcla" compress "$data/HLC" --block-cols 32768 -o "$data/HLCb.h5" --quiet | grep -E "blocks of|genotypes:"
timeout 60 "$here/bin/kcla" multiply "$data/HLCb.h5" --transpose --verify --repeat 20 | grep -E "^time|verify"
for f in HLC HLCb; do
  timeout 90 "$here/bin/kcla" pca "$data/$f.h5" --components 10 -o "$out/pca-$f" | grep -E "^time|pca:"
done
paste "$out/pca-HLC.eigenval" "$out/pca-HLCb.eigenval" | head -10 | tr '\n' ' '; echo
echo "=== 2-bit GEMV"
TESTS=kcla_test_packed CHECK=0 BASELINES=2-bit bash "$here/packed-go.sh" "$out/packed" 2>&1 |
  grep -vE '^\s*$' | tail -40
