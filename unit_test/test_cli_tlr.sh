#!/usr/bin/env bash
# End to end: `kcla tlr compress` (kernel on points, dense Matrix Market; fp64/fp32/bf16),
# `kcla tlr info`, `kcla tlr gemm --verify` (TLR x dense, TLR x TLR, transposes, alpha and
# beta, a given C, --output), and the exit codes of usage errors (2) and bad files (1);
# when MPIEXEC is given, the same under mpiexec with 2-4 ranks: one file written by the grid
# (the same factors as one process writes), SUMMA products checked with --verify.
#
#   test_cli_tlr.sh KCLA_BINARY WORK_DIR [MPIEXEC]
set -u
mpiexec=${3:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=cli_test_lib.sh
source "$here/cli_test_lib.sh"  # sets $kcla, $work; cd "$work"

# --- help ---------------------------------------------------------------------------------
run 0 "$kcla" tlr --help
has out.txt "compress"
for sub in compress info gemm; do
  run 0 "$kcla" tlr $sub --help
  has out.txt "usage: kcla tlr $sub"
done
run 0 "$kcla" --help
has out.txt "tlr SUBCOMMAND"

# --- compress a kernel matrix, inspect it, multiply ---------------------------------------
run 0 "$kcla" tlr compress --kernel matern32 --points 300 --dim 2 --length-scale 0.2 --seed 3 \
  --tile-size 32 --tolerance 1e-7 -o a.h5
has out.txt "shape +300 x 300, tiles of 32: 10 x 10 grid"
has out.txt "precision +fp64"
below out.txt "^error " 1e-6
[ -f a.h5 ] || fail "a.h5 was not written"

run 0 "$kcla" tlr info a.h5
has out.txt "kcla-tlr, version 2"
has out.txt "300 x 300"
has out.txt "ranks +min [0-9]+, mean [0-9.]+, max [0-9]+"

run 0 "$kcla" tlr gemm a.h5 --dense-cols 24 --repeat 2 --verify
has out.txt "C \(300 x 24\)"
has out.txt "GFLOP/s executed"
has out.txt "workspace"
has out.txt "verify .*: OK"

run 0 "$kcla" tlr gemm a.h5 a.h5 --transa --transb --alpha 2 --beta 0.5 --repeat 2 --verify \
  --backend serial -o c.mtx
has out.txt "C \(300 x 300\)"
has out.txt "back end serial"
has out.txt "verify .*: OK"
has c.mtx "^%%MatrixMarket matrix array real general"

# A given C (the result above), TLR x dense transposed, a small workspace budget.
run 0 "$kcla" tlr gemm a.h5 --transb --dense-cols 300 --c c.mtx --beta -1 --workspace 2000000 \
  --repeat 1 --verify
has out.txt "verify .*: OK"

# A given C of the wrong shape: the file named.
run 1 "$kcla" tlr gemm a.h5 --dense-cols 7 --c c.mtx --repeat 1
has err.txt "c.mtx: is 300 x 300, C must be 300 x 7"

# Without a budget, a target number of rectangles (pipelined, two arenas).
run 0 "$kcla" tlr gemm a.h5 --dense-cols 300 --rectangles 3 --repeat 1 --verify
has out.txt ", [23] rectangles"
has out.txt "verify .*: OK"
run 2 "$kcla" tlr gemm a.h5 --rectangles 0
has err.txt "--rectangles: expects an integer >= 1"

# --- other precisions ----------------------------------------------------------------------
run 0 "$kcla" tlr compress --kernel exponential --points 256 --dim 3 --tile-size 32 \
  --tolerance 1e-3 --precision fp32 -o f.h5
has out.txt "precision +fp32 \(float32\), rank multiple 4"
run 0 "$kcla" tlr gemm f.h5 f.h5 --transb --repeat 2 --verify
has out.txt "verify .*: OK"

run 0 "$kcla" tlr compress --kernel gaussian --points 200 --tile-size 40 --tolerance 1e-3 \
  --precision bf16 --max-rank 16 -o h.h5
has out.txt "precision +bf16 \(bfloat16\), rank multiple 8"
has out.txt "max 1[0-6] "
run 0 "$kcla" tlr info h.h5
has out.txt "bf16"
run 0 "$kcla" tlr gemm h.h5 --dense-cols 16 --repeat 2 --verify
has out.txt "verify .*: OK"

# --- a dense Matrix Market input ---------------------------------------------------------
awk 'BEGIN {
  n = 45; print "%%MatrixMarket matrix array real general"; print "% a smooth kernel"; print n, n
  for (j = 1; j <= n; ++j) for (i = 1; i <= n; ++i) printf "%.17g\n", 1 / (1 + (i - j) * (i - j) / 50)
}' >dense.mtx
run 0 "$kcla" tlr compress --dense dense.mtx --tile-size 16 --tolerance 1e-9 --absolute -o d.h5
has out.txt "shape +45 x 45, tiles of 16: 3 x 3 grid"
has out.txt "absolute tolerance"
below out.txt "^error " 1e-8
run 0 "$kcla" tlr gemm d.h5 d.h5 --verify --repeat 1
has out.txt "verify .*: OK"

# --- the compression methods: randomized on the default device, the host SVD --------------
run 0 "$kcla" tlr compress --kernel matern32 --points 300 --dim 2 --length-scale 0.2 --seed 3 \
  --tile-size 32 --tolerance 1e-7 --method randomized -o ar.h5
has out.txt "method +randomized on .*: 100 tiles in 1 batches"
has out.txt "shape +300 x 300, tiles of 32: 10 x 10 grid"
below out.txt "^error " 1e-6
run 0 "$kcla" tlr compress --kernel matern32 --points 300 --dim 2 --length-scale 0.2 --seed 3 \
  --tile-size 32 --tolerance 1e-7 --method svd -o as.h5
has out.txt "method +svd"
below out.txt "^error " 1e-6
run 2 "$kcla" tlr compress --kernel gaussian --points 10 --tile-size 4 --method qr -o x.h5
has err.txt "--method"
run 2 "$kcla" tlr compress --dense a.h5 --tile-size 4 --method randomized -o x.h5
has err.txt "kernel sources"

# --- usage errors: exit 2, a message on stderr ----------------------------------------------
run 2 "$kcla" tlr
run 2 "$kcla" tlr frobnicate
has err.txt "unknown subcommand"
run 2 "$kcla" tlr compress --tile-size 32 -o x.h5
has err.txt "exactly one source"
run 2 "$kcla" tlr compress --kernel nonsense --points 10 --tile-size 4 -o x.h5
has err.txt "--kernel"
run 2 "$kcla" tlr compress --kernel gaussian --points 10 -o x.h5
has err.txt "--tile-size"
run 2 "$kcla" tlr compress --kernel gaussian --points 10 --tile-size 4 --precision fp8 -o x.h5
has err.txt "--precision"
run 2 "$kcla" tlr gemm
run 2 "$kcla" tlr gemm a.h5 a.h5 --dense-cols 3
run 2 "$kcla" tlr gemm a.h5 --no-such-option 3
has err.txt "unknown option"
run 2 "$kcla" tlr info
[ ! -e x.h5 ] || fail "a usage error wrote x.h5"

# --- bad files and failures: exit 1, the file named on stderr -------------------------------
echo "not an hdf5 file" >bad.h5
run 1 "$kcla" tlr info bad.h5
has err.txt "bad.h5: not an HDF5 file"
head -c 2000 a.h5 >truncated.h5
run 1 "$kcla" tlr gemm truncated.h5 --repeat 1
has err.txt "truncated.h5"
run 1 "$kcla" tlr info missing.h5
has err.txt "missing.h5: no such file"
run 1 "$kcla" tlr gemm a.h5 f.h5 --repeat 1
has err.txt "op\(A\) is 300 x 300 but op\(B\) has 256 rows"
printf '%%%%MatrixMarket matrix array real general\n3 3\n1.0000000000000\n2.0000000000000\n' >short.mtx
run 1 "$kcla" tlr compress --dense short.mtx --tile-size 2 -o s.h5
has err.txt "short.mtx: the file ends after 2 of the 9 values"
[ ! -e s.h5 ] || fail "a failed compression wrote s.h5"

# --- MPI ranks: one file from the grid, distributed products --------------------------------
if [ -n "$mpiexec" ]; then
  export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMP_NUM_THREADS=1 OMP_PROC_BIND=false
  run 0 "$kcla" tlr gemm a.h5 --dense-cols 5 --seed 4 -o c_single.mtx --repeat 1
  for np in 2 3 4; do
    run 0 "$mpiexec" -np $np "$kcla" tlr compress --kernel matern32 --points 300 --dim 2 \
      --length-scale 0.2 --seed 3 --tile-size 32 --tolerance 1e-7 -o grid$np.h5
    has out.txt "on $np ranks"
    has out.txt "shape +300 x 300, tiles of 32: 10 x 10 grid"
    below out.txt "^error " 1e-6
    # The same tiles as one process compresses: the same product, bit for bit.
    run 0 "$kcla" tlr gemm grid$np.h5 --dense-cols 5 --seed 4 -o c_grid$np.mtx --repeat 1
    cmp -s c_single.mtx c_grid$np.mtx || fail "the file $np ranks wrote gives another product"
    run 0 "$mpiexec" -np $np "$kcla" tlr gemm grid$np.h5 --verify --repeat 2
    has out.txt "verify .*OK"
    has out.txt "summa +10 steps"
    run 0 "$mpiexec" -np $np "$kcla" tlr gemm a.h5 grid$np.h5 --transa --transb --alpha 0.5 \
      --beta 2 --verify --repeat 1 --grid 1x$np
    has out.txt "grid +1 x $np ranks"
    has out.txt "verify .*OK"
    run 0 "$mpiexec" -np $np "$kcla" tlr gemm a.h5 --dense-cols 5 --seed 4 -o c_mpi$np.mtx \
      --repeat 1 --precision fp32 --verify
    has out.txt "verify .*OK"
  done
  run 0 "$mpiexec" -np 3 "$kcla" tlr compress --kernel matern32 --points 300 --dim 2 \
    --length-scale 0.2 --seed 3 --tile-size 32 --tolerance 1e-7 --method randomized -o gridr.h5
  has out.txt "method +randomized on .*: 100 tiles in 3 batches"
  below out.txt "^error " 1e-6
  run 0 "$mpiexec" -np 2 "$kcla" tlr compress --dense dense.mtx --tile-size 16 --tolerance 1e-9 --absolute -o dm.h5
  below out.txt "^error " 1e-8
  run 1 "$mpiexec" -np 2 "$kcla" tlr gemm a.h5 --dense-cols 7 --c c.mtx --repeat 1
  has err.txt "c.mtx: is 300 x 300, C must be 300 x 7"
  run 2 "$mpiexec" -np 2 "$kcla" tlr gemm a.h5 --grid 3x1 --repeat 1
  has err.txt "needs 3 ranks"
  run 2 "$kcla" tlr gemm a.h5 --grid 1x1 --repeat 1
  has err.txt "goes with mpirun"
fi

echo "kcla tlr: all checks passed"
