#!/usr/bin/env bash
# Left products and genotype operators on the GPU, from a bundle made by pack.sh (copy this
# file into the bundle as go.sh; carry PLINK filesets as data/NAME.bed.xz + .bim.xz + .fam
# to be compressed there, grammars as data/NAME.h5). On the GPU machine:
#   bash BUNDLE/go.sh OUT
# Runs the transposed-product and genotype-operator tests, then for every grammar:
# kcla multiply (right) and --transpose, B = 1 and 64, each with --compare (cuSPARSE's
# every algorithm on A^T's copy and with the transpose operation, dense, 2-bit), REPEAT
# (default 50) products each. RIGHT=0 skips the right products, TESTS=0 the tests.
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"  # here, programs, libraries
out=$1
mkdir -p "$out"
kcla=$here/bin/kcla
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
if [ "${TESTS:-1}" = 1 ]; then
  "$here/bin/kcla_test_grammar_multiply" --gtest_brief=1 2>&1 | tail -4
  "$here/bin/kcla_test_genotype" --gtest_brief=1 2>&1 | tail -3
fi
for x in "$here"/data/*.bed.xz; do
  [ -e "$x" ] || continue
  name=$(basename "$x" .bed.xz)
  xz -dc "$x" > "$out/$name.bed"
  xz -dc "$here/data/$name.bim.xz" > "$out/$name.bim"
  cp "$here/data/$name.fam" "$out/$name.fam"
  "$kcla" compress "$out/$name.bed" -o "$out/$name.h5" --threads 16 --quiet | tail -1
done
for g in "$here"/data/*.h5 "$out"/*.h5; do
  [ -e "$g" ] || continue
  echo "=== $(basename "$g")"
  for B in 1 64; do
    [ "${RIGHT:-1}" = 1 ] && "$kcla" multiply "$g" --batch "$B" --compare --repeat "${REPEAT:-50}" 2>&1 |
      grep -E "^time|best baseline|^multiply"
    "$kcla" multiply "$g" --transpose --batch "$B" --compare --verify --repeat "${REPEAT:-50}" \
      2>&1 | tee "$out/$(basename "$g" .h5)-T-$B.txt" |
      grep -E "^time|best baseline|verify|op\(A\)=T CSR_ALG1\+|A\^T copy: cuSPARSE CSR_ALG2\+pre|^multiply"
  done
done
