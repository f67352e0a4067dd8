#!/usr/bin/env bash
# Genotype commands on the GPU, from a bundle made by pack.sh (copy this file into the
# bundle as go.sh; carry PLINK filesets as data/NAME.bed.xz + NAME.bim.xz + NAME.fam and
# optional score and covariate files as data/NAME.score.xz, data/NAME.covar). On the GPU
# machine:
#   [KCLA_GO_COMMANDS="pca score assoc"] bash BUNDLE/go.sh OUT
# For every fileset: `kcla pca --backend cuda` (fp64 and fp32, 10 components, and --exact);
# with a score file, `kcla score --backend cuda --variance-standardize`; `kcla assoc
# --backend cuda` (fp64 and fp32, with the covariates when given). Eigenvalues, scores and
# association files land in OUT to be compared with the host's.
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"  # here, programs, libraries
out=$1
mkdir -p "$out"
kcla=$here/bin/kcla
work=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for x in "$here"/data/*.bed.xz; do
  name=$(basename "$x" .bed.xz)
  xz -dc "$x" > "$work/$name.bed"
  xz -dc "$here/data/$name.bim.xz" > "$work/$name.bim"
  cp "$here/data/$name.fam" "$work/$name.fam"
  echo "=== $name"
  commands=${KCLA_GO_COMMANDS:-pca score assoc}
  if [[ " $commands " == *" pca "* ]]; then
    for p in fp64 fp32; do
      "$kcla" pca "$work/$name" --backend cuda --threads 16 --precision "$p" -o "$out/$name-$p"
    done
    "$kcla" pca "$work/$name" --backend cuda --threads 16 --exact -o "$out/$name-exact"
  fi
  if [[ " $commands " == *" assoc "* ]]; then
    covar=()
    [ -e "$here/data/$name.covar" ] && covar=(--covar "$here/data/$name.covar")
    for p in fp64 fp32; do
      "$kcla" assoc "$work/$name" "${covar[@]}" --backend cuda --threads 16 --precision "$p" \
        -o "$out/$name-assoc-$p"
    done
  fi
  if [[ " $commands " == *" score "* ]] && [ -e "$here/data/$name.score.xz" ]; then
    xz -dc "$here/data/$name.score.xz" > "$work/$name.score"
    "$kcla" score "$work/$name" --score "$work/$name.score" --variance-standardize \
      --backend cuda --threads 16 -o "$out/$name.sscore"
  fi
done
rm -rf "$work"
