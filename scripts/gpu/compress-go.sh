#!/usr/bin/env bash
# TLR compression on the GPU machine (copy into a bundle made by pack.sh with kcla,
# kcla_test_tlr, kcla_test_mpi and kcla_bench_tlr_compress, as go.sh; a host (OpenMP)
# build of kcla_bench_tlr_compress packed into BUNDLE/host gives the host SVD path every
# core):
#   bash BUNDLE/go.sh OUT
# The host build travels as host.tar.xz (bin/ and lib/ of the OpenMP build).
# 1. kcla_test_tlr (randomized compression on the GPU against the dense kernel matrix),
#    kcla_test_mpi with 1 rank and 2 ranks sharing the GPU;
# 2. kcla_bench_tlr_compress: Matern 3/2 at N = 65536, tiles of 1024, tolerance 1e-6, fp32
#    on the GPU (and Matern 1/2); N = 16384, tiles of 512: GPU next to the host SVD on every
#    host core;
# 3. the tool: kcla tlr compress on the GPU (the default method there) at N = 32768.
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"  # here, programs, libraries
out=$1
[ -d "$here/host" ] || [ ! -f "$here/host.tar.xz" ] || tar -C "$here" -xJf "$here/host.tar.xz"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_PROC_BIND=false
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc
echo "== tests"
timeout 200 "$here/bin/kcla_test_tlr" > "$out/test_tlr.log" 2>&1
echo "kcla_test_tlr rc=$? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' "$out/test_tlr.log" | tr '\n' ' ')"
grep -E "^\[  FAILED  \]" "$out/test_tlr.log" | head -5
for np in 1 2; do
  timeout 200 mpirun -np $np "$here/bin/kcla_test_mpi" --gtest_filter='DistributedTlr.*Compress*' \
    > "$out/test_mpi_np$np.log" 2>&1
  echo "kcla_test_mpi -np $np rc=$? $(grep -E '^\[  PASSED  \]|FAILED' "$out/test_mpi_np$np.log" | head -3 | tr '\n' ' ')"
done
bench="$here/bin/kcla_bench_tlr_compress"
echo "== device compression, N 65536, tile 1024, tolerance 1e-6, fp32"
timeout 200 "$bench" --n 65536 --tile 1024 --tolerance 1e-6 --kernel matern32 --methods device \
  --check-tiles 64 2>&1 | grep -v "^Kokkos\|OMP_PROC\|In general\|For "
timeout 200 "$bench" --n 65536 --tile 1024 --tolerance 1e-6 --kernel matern12 --methods device \
  --check-tiles 64 2>&1 | grep -v "^Kokkos\|OMP_PROC\|In general\|For "
echo "== device vs host SVD, N 16384, tile 512"
timeout 100 "$bench" --n 16384 --tile 512 --tolerance 1e-6 --kernel matern32 --methods device \
  2>&1 | grep "^{"
if [ -x "$here/host/bin/kcla_bench_tlr_compress" ]; then
  LD_LIBRARY_PATH="$here/host/lib:$LD_LIBRARY_PATH" OMP_NUM_THREADS=$(nproc) timeout 200 \
    "$here/host/bin/kcla_bench_tlr_compress" --n 16384 --tile 512 --tolerance 1e-6 \
    --kernel matern32 --methods host,device 2>&1 | grep "^{"
fi
echo "== the tool"
cd "$out" || exit 1
timeout 100 "$here/bin/kcla" tlr compress --kernel matern32 --points 32768 --tile-size 1024 \
  --tolerance 1e-6 --precision fp32 -o k.h5 2>&1 | grep -E "compressed|method|ranks|bytes"
rm -f k.h5
