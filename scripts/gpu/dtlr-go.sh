#!/usr/bin/env bash
# Distributed TLR on the GPU machine (copy into a bundle made by pack.sh with kcla,
# kcla_test_mpi and kcla_bench_distributed_tlr, optionally more test programs, as go.sh):
#   bash BUNDLE/go.sh OUT
# 1. every test program in the bundle except kcla_test_mpi, then kcla_test_mpi with one
#    rank and with 2 ranks sharing the one GPU;
# 2. kcla_bench_distributed_tlr, N = 32768, tiles of 1024, rank 64 (b/16), fp32: 1 rank
#    (with the single-process product next to it) and 2 ranks on the GPU, B dense 256
#    columns and B TLR;
# 3. the tool: a kernel matrix compressed by 2 ranks into one file, multiplied by 2 ranks
#    on the GPU with --verify.
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"  # here, programs, libraries
out=$1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_PROC_BIND=false KCLA_TEST_FIXTURE_DIR="$here/fixtures"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mpirun --version 2>&1 | head -1
echo "== tests"
for t in "$here"/bin/kcla_test_*; do
  name=$(basename "$t")
  [ "$name" = kcla_test_mpi ] && continue
  timeout 300 "$t" > "$out/$name.log" 2>&1
  echo "$name rc=$? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' "$out/$name.log" | tr '\n' ' ')"
  grep -E "^\[  FAILED  \]" "$out/$name.log" | head -5
done
for np in 1 2; do
  timeout 300 mpirun -np $np "$here/bin/kcla_test_mpi" > "$out/test_mpi_np$np.log" 2>&1
  echo "kcla_test_mpi -np $np rc=$? $(grep -E '^\[  PASSED  \]|FAILED' "$out/test_mpi_np$np.log" | head -3 | tr '\n' ' ')"
done
echo "== kcla_bench_distributed_tlr (N 32768, tile 1024, rank 64, fp32)"
for b in dense tlr; do
  for np in 1 2; do
    timeout 240 mpirun -np $np "$here/bin/kcla_bench_distributed_tlr" --n 32768 --tile 1024 \
      --rank 64 --cols 256 --b $b --repeat 10 2>&1 | grep -E "^distributed|^single|rank [0-9]+\)"
  done
done
echo "== the tool under mpirun -np 2"
cd "$out" || exit 1
timeout 200 mpirun -np 2 "$here/bin/kcla" tlr compress --kernel matern32 --points 8192 \
  --tile-size 512 --tolerance 1e-6 --precision fp32 -o k.h5 2>&1 | grep -E "compressed|grid|ranks|error"
timeout 200 mpirun -np 2 "$here/bin/kcla" tlr gemm k.h5 --dense-cols 256 --backend cuda --verify \
  --repeat 10 2>&1 | grep -E "time|summa|verify|grid"
timeout 200 "$here/bin/kcla" tlr gemm k.h5 --dense-cols 256 --backend cuda --verify --repeat 10 \
  2>&1 | grep -E "time|verify"
rm -f k.h5
