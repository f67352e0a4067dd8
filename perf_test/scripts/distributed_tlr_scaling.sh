#!/usr/bin/env bash
# Strong and weak scaling of the distributed TLR product (kcla_bench_distributed_tlr) on
# host ranks: strong, one problem on 1, 2 and 4 ranks; weak, N growing as sqrt(ranks) so
# that every rank holds about the same factor bytes. One OpenMP thread per rank.
#
#   perf_test/scripts/distributed_tlr_scaling.sh [BUILD_DIR] [N] [TILE] [RANK] [COLS]
set -euo pipefail
build=${1:-build}
n=${2:-8192}
tile=${3:-256}
rank=${4:-16}
cols=${5:-128}
bench=$build/perf_test/kcla_bench_distributed_tlr
[ -x "$bench" ] || { echo "no $bench (a build with MPI)" >&2; exit 1; }
export OMP_NUM_THREADS=1 OMP_PROC_BIND=false
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
echo "cores: $(getconf _NPROCESSORS_ONLN)"
echo "== strong scaling: N $n, tile $tile, rank $rank, B dense $cols columns, fp32"
for np in 1 2 4; do
  mpirun -np $np "$bench" --n "$n" --tile "$tile" --rank "$rank" --cols "$cols" --repeat 5 2>&1 |
    grep -E "^distributed|^single"
done
echo "== weak scaling: N = $n sqrt(ranks)"
for np in 1 2 4; do
  nw=$(awk -v n="$n" -v p="$np" -v t="$tile" 'BEGIN { x = n * sqrt(p); printf "%d", int(x / t + 0.5) * t }')
  mpirun -np $np "$bench" --n "$nw" --tile "$tile" --rank "$rank" --cols "$cols" --repeat 5 2>&1 |
    grep -E "^distributed"
done
