#!/usr/bin/env bash
# The MPI and footprint checks of issue 12 on the GPU machine (copy into a bundle made by
# pack.sh with kcla, kcla_test_mpi and kcla_bench_blocks as scale.sh):
#   bash BUNDLE/scale.sh OUT
# 1. kcla_test_mpi under mpirun -np 2: two ranks sharing the one GPU;
# 2. the kcla tool: a generated panel compressed in blocks, multiplied by one process and
#    by 2 ranks (mpirun) on the GPU, --verify, and the two y compared;
# 3. the footprint table: kcla_bench_blocks at 2,500 / 10,000 / 50,000 / 100,000 samples
#    (100,000 variants, one simulator), bytes of grammar, 2-bit and CSR.
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"  # here, programs, libraries
out=$1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_PROC_BIND=false
mkdir -p "$out"
kcla=$here/bin/kcla
mpirun --version 2>&1 | head -1
echo "== kcla_test_mpi, 2 ranks on one GPU"
timeout 200 mpirun -np 2 "$here/bin/kcla_test_mpi" > "$out/test_mpi.log" 2>&1
echo "kcla_test_mpi -np 2 rc=$? ($(grep -c '^\[       OK \]' "$out/test_mpi.log") passed on rank 0)"
grep -E "FAILED|Failure" "$out/test_mpi.log" | head
echo "== the tool: one process and 2 ranks"
cd "$out" || exit 1
timeout 120 "$kcla" generate --samples 20000 --variants 50000 --sfs-exponent 0.75 --threads 16 -o panel --quiet
timeout 200 "$kcla" compress panel -o panel.h5 --block-cols 2048 --threads 16 --quiet | tail -4
timeout 100 "$kcla" multiply panel.h5 --backend cuda --batch 4 --verify --repeat 5 -o y1.txt | tail -3
timeout 100 mpirun -np 2 "$kcla" multiply panel.h5 --backend cuda --batch 4 --verify --repeat 5 -o y2.txt | tail -3
timeout 100 mpirun -np 2 "$kcla" multiply panel.h5 --backend cuda --semiring min_plus --verify --repeat 2 | tail -1
timeout 100 mpirun -np 2 "$kcla" multiply panel.h5 --backend cuda --semiring boolean --verify --repeat 2 | tail -1
paste y1.txt y2.txt | awk '{for (i = 1; i <= NF / 2; ++i) {d = $i - $(i + NF / 2); a = $i < 0 ? -$i : $i; if (d < 0) d = -d; if (d > m * 1) m = d; if (a > s) s = a}} END {printf "y, one process vs 2 ranks: max |difference| %.3g, max |y| %.3g\n", m, s}'
rm -f panel.bed
echo "== footprint against samples"
for n in 2500 10000 50000 100000; do
  timeout 200 "$here/bin/kcla_bench_blocks" --samples $n --variants 100000 --sfs-exponent 0.75 \
    --threads 16 --batch 1 --repeat 3 --chunks 0 --packed-limit 0 --verify-rows 8 2>&1 |
    grep -E "^panel|generate|bytes|kcla B=1|verify"
done
