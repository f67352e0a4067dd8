#!/usr/bin/env bash
# End to end: block grammar files. `kcla compress --block-cols` on Matrix Market, on a
# PLINK fileset (streamed from the .bed), on a VCF (streamed record by record) and on ms
# output (site ranges read from each haplotype line), `kcla info` and `kcla multiply --verify` in every
# semiring on the block file, the same y as the single grammar, also with blocks streamed
# under --device-memory; the memory limit's error;
# and, when MPIEXEC is given, compress and multiply under mpiexec with 2-4 ranks giving
# the single-process file and y.
#
#   test_cli_blocks.sh KCLA_BINARY WORK_DIR [MPIEXEC]
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mpiexec=${3:-}
# shellcheck source=cli_test_lib.sh
source "$here/cli_test_lib.sh"  # sets $kcla, $work; cd "$work"

# The products of two grammar files for the same random x agree to float rounding (block
# sums add in another order):  same_y FILE_A FILE_B SEED WHAT
same_y() {
  run 0 "$kcla" multiply "$1" --seed "$3" -o y_a.txt --repeat 1
  run 0 "$kcla" multiply "$2" --seed "$3" -o y_b.txt --repeat 1
  paste y_a.txt y_b.txt |
    awk '{d = $1 - $2; if (d < 0) d = -d; if (d > 1e-5 * (1 + ($1 < 0 ? -$1 : $1))) bad = 1} END {exit bad}' ||
    fail "$4: the two files give different y"
}

# --- a Matrix Market matrix with repeated rows, integer values (exact sums) -------------
{
  echo "%%MatrixMarket matrix coordinate real general"
  echo "30 40 0"
  for r in $(seq 1 30); do
    for c in $(seq 1 40); do
      if [ $(((r * 7 + c * 3) % 5)) -lt 2 ] || [ $(((r % 4) * c % 7)) -eq 1 ]; then
        echo "$r $c $(((r + c) % 3 + 1))"
      fi
    done
  done
} > m.mtx
sed -i "2s/.*/30 40 $(($(wc -l < m.mtx) - 2))/" m.mtx
run 0 "$kcla" compress m.mtx -o single.h5 --quiet
run 0 "$kcla" compress m.mtx -o blocks.h5 --block-cols 7 --threads 2 --quiet
has out.txt "compressed m.mtx -> blocks.h5 .*"
has out.txt "6 blocks of 7 columns"
has out.txt "throughput: .* M nonzeros/s; peak RSS"
run 0 "$kcla" info blocks.h5
has out.txt "block grammar: shape 30 x 40, nnz [0-9]+, 6 blocks"
for s in plus_times boolean min_plus; do
  run 0 "$kcla" multiply blocks.h5 --semiring "$s" --verify --verify-rows 0 --repeat 2
  has out.txt "verify: 30 rows x 1 vectors"
  has out.txt "OK"
  run 0 "$kcla" multiply blocks.h5 --semiring "$s" --batch 4 --verify --repeat 1
  has out.txt "OK"
done
# The left product z = A^T y on the block file, every column checked, every semiring; the
# same z as the single grammar's.
for s in plus_times boolean min_plus; do
  run 0 "$kcla" multiply blocks.h5 --transpose --semiring "$s" --batch 3 --verify --repeat 2
  has out.txt "multiply \(transposed, z = A\^T y\): 30 x 40 in 6 blocks, B=3"
  has out.txt "verify: 40 columns x 3 vectors"
  has out.txt "OK"
done
seq 1 30 | awk '{print ($1 % 7) - 3}' > yt.txt
run 0 "$kcla" multiply single.h5 --transpose --x yt.txt -o z_single.txt --repeat 1
run 0 "$kcla" multiply blocks.h5 --transpose --x yt.txt -o z_blocks.txt --repeat 1
cmp -s z_single.txt z_blocks.txt || fail "block and single grammar give different z"
run 2 "$kcla" multiply blocks.h5 --transpose --device-memory 8K
has err.txt "--transpose is not available with --device-memory"
seq 1 40 > cols.txt
run 1 "$kcla" multiply blocks.h5 --transpose --x cols.txt
has err.txt "cols.txt.*expected rows x B = 30"
# A memory limit that reading the file whole would not fit: one pass per block.
run 0 "$kcla" compress m.mtx -o passes.h5 --block-cols 7 --memory-limit 20K --quiet
has out.txt "6 blocks of 7 columns"
seq 1 40 | awk '{print ($1 % 5) - 2}' > x.txt
run 0 "$kcla" multiply single.h5 --x x.txt -o y_single.txt --repeat 1
run 0 "$kcla" multiply blocks.h5 --x x.txt -o y_blocks.txt --repeat 1
cmp -s y_single.txt y_blocks.txt || fail "block and single grammar give different y"
run 0 "$kcla" multiply blocks.h5 --x x.txt -o y_blocks_cold.txt --repeat 0
has out.txt "one product, cold"
cmp -s y_blocks.txt y_blocks_cold.txt || fail "--repeat 0 gives another y on block files"
run 0 "$kcla" multiply passes.h5 --x x.txt -o y_passes.txt --repeat 1
cmp -s y_blocks.txt y_passes.txt || fail "Matrix Market read in passes gives another y"

# --- out of core: a device budget below the blocks' arrays streams some of them ----------
run 0 "$kcla" multiply blocks.h5 --x x.txt -o y_streamed.txt --repeat 2 --device-memory 8K
has out.txt "streamed: [1-6] of 6 blocks from host memory"
cmp -s y_blocks.txt y_streamed.txt || fail "streamed blocks give another y"
for s in plus_times boolean min_plus; do
  run 0 "$kcla" multiply blocks.h5 --semiring "$s" --batch 3 --verify --verify-rows 0 \
    --repeat 2 --device-memory 6K
  has out.txt "streamed: [1-6] of 6 blocks"
  has out.txt "OK"
done
run 1 "$kcla" multiply blocks.h5 --device-memory 1K
has err.txt "cannot hold 3 slots of the largest block"
run 2 "$kcla" multiply blocks.h5 --device-memory lots
has err.txt "device-memory"

# --- a PLINK fileset (random codes, missing calls too), streamed from the .bed ---------
for i in $(seq 1 9); do echo "f$i i$i 0 0 1 -9"; done > p.fam
for j in $(seq 1 50); do echo "1 s$j 0 $j A C"; done > p.bim
{ printf '\x6c\x1b\x01'; head -c $((50 * 3)) /dev/urandom; } > p.bed
run 0 "$kcla" compress p.bed -o p.h5 --block-cols 8 --quiet
has out.txt "7 blocks of 8 columns"
run 0 "$kcla" multiply p.h5 --verify --verify-rows 0 --batch 3 --repeat 1
has out.txt "OK"
run 0 "$kcla" compress p -o p_single.h5 --quiet
same_y p_single.h5 p.h5 7 "PLINK block and single grammar"

# --- a VCF, read record by record into blocks -------------------------------------------
{
  printf '##fileformat=VCFv4.2\n##contig=<ID=1>\n'
  printf '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\n'
  printf '#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT'
  for s in $(seq 1 12); do printf '\ts%d' "$s"; done
  echo
  for v in $(seq 1 45); do
    printf '1\t%d\tv%d\tA\tC\t.\tPASS\t.\tGT' $((v * 10)) "$v"
    for s in $(seq 1 12); do
      case $(((v * s + v / 3) % 4)) in
        0) printf '\t0/0' ;; 1) printf '\t0/1' ;; 2) printf '\t1|1' ;; 3) printf '\t./.' ;;
      esac
    done
    echo
  done
} > g.vcf
run 0 "$kcla" compress g.vcf -o g_blocks.h5 --block-cols 8 --quiet
has out.txt "shape: 12 x 45, 300 nonzeros, 6 blocks of 8 columns"
run 0 "$kcla" compress g.vcf -o g_single.h5 --quiet
run 0 "$kcla" multiply g_blocks.h5 --repeat 1 --verify --verify-rows 0
has out.txt "OK"
same_y g_single.h5 g_blocks.h5 3 "VCF block and single grammar"

# --- ms output, read by site ranges of each haplotype line --------------------------------
{
  echo "scrm 16 1 -t 10"; echo "1"; echo; echo "//"; echo "segsites: 50"
  printf 'positions:'; for j in $(seq 1 50); do printf ' 0.%03d' "$j"; done; echo
  for h in $(seq 1 16); do
    for j in $(seq 1 50); do printf '%d' $(((h * j + j / 7 + h / 3) % 3 == 0)); done
    echo
  done
} > r.ms
run 0 "$kcla" compress r.ms -o r_blocks.h5 --block-cols 12 --quiet
has out.txt "shape: 8 x 50, [0-9]+ nonzeros, 5 blocks of 12 columns"
run 0 "$kcla" compress r.ms -o r_single.h5 --quiet
run 0 "$kcla" multiply r_blocks.h5 --repeat 1 --verify --verify-rows 0
has out.txt "OK"
same_y r_single.h5 r_blocks.h5 5 "ms block and single grammar"

# --- limits and errors ---------------------------------------------------------------
run 1 "$kcla" compress m.mtx -o tiny.h5 --block-cols 20 --memory-limit 1K
has err.txt "memory limit"
has err.txt "--block-cols"
[ ! -e tiny.h5 ] || fail "a failed block compress left tiny.h5 behind"
[ -z "$(ls -A | grep '\.tmp\.')" ] || fail "a temporary file was left behind"
run 2 "$kcla" compress m.mtx -o x.h5 --block-cols 5 --memory-limit lots
has err.txt "memory-limit"
run 2 "$kcla" multiply blocks.h5 --compare

# --- MPI ranks: the same file content and y as one process ------------------------------
if [ -n "$mpiexec" ]; then
  export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMP_NUM_THREADS=1
  for np in 2 4; do
    run 0 "$mpiexec" -np $np "$kcla" compress m.mtx -o mpi$np.h5 --block-cols 7 --threads 1 --quiet
    has out.txt "($np ranks x 1 threads)"
    run 0 "$kcla" multiply mpi$np.h5 --x x.txt -o y_mpi_file$np.txt --repeat 1
    cmp -s y_single.txt y_mpi_file$np.txt || fail "the file $np ranks wrote gives another y"
  done
  run 0 "$kcla" compress m.mtx -o narrow.h5 --block-cols 3 --quiet  # 14 blocks: some streamed
  for np in 2 3; do
    run 0 "$mpiexec" -np $np "$kcla" multiply blocks.h5 --x x.txt -o y_ranks$np.txt --verify --repeat 2
    has out.txt "$np ranks"
    has out.txt "reduction host-staged"
    has out.txt "OK"
    cmp -s y_single.txt y_ranks$np.txt || fail "$np ranks give another y"
    run 0 "$mpiexec" -np $np "$kcla" multiply blocks.h5 --x x.txt -o y_ranks_host$np.txt \
      --repeat 1 --mpi-transport host
    has out.txt "reduction host-staged"
    cmp -s y_single.txt y_ranks_host$np.txt || fail "$np ranks (--mpi-transport host) give another y"
    run 2 "$mpiexec" -np $np "$kcla" multiply blocks.h5 --repeat 1 --mpi-transport carrier-pigeon
    has err.txt "mpi-transport"
    for s in boolean min_plus; do
      run 0 "$mpiexec" -np $np "$kcla" multiply blocks.h5 --semiring $s --batch 2 --verify --repeat 1
      has out.txt "OK"
    done
    run 0 "$mpiexec" -np $np "$kcla" multiply narrow.h5 --x x.txt -o y_ranks_streamed$np.txt \
      --repeat 2 --device-memory 5K
    has out.txt "streamed: [1-9][0-9]* of 14 blocks"
    cmp -s y_single.txt y_ranks_streamed$np.txt || fail "$np ranks streaming give another y"
  done
fi
echo "all block CLI checks passed"
