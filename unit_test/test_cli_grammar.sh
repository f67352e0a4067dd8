#!/usr/bin/env bash
# End to end: `kcla demo`, `kcla compress` (Matrix Market, PLINK written by the test),
# `kcla info`, `kcla multiply --verify` in every semiring, batched, with --x and -o, and the
# exit codes of usage errors (2) and bad input (1); `kcla generate` read back.
#
#   test_cli_grammar.sh KCLA_BINARY WORK_DIR
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=cli_test_lib.sh
source "$here/cli_test_lib.sh"  # sets $kcla, $work; cd "$work"

# --- the main job on its embedded default -------------------------------------------------
run 0 "$kcla" demo
has out.txt "score check against CSR: relative error .* -> OK"
has out.txt "grammar y = G beta"

# --- a small repetitive matrix: rows 0-3 repeat, so RePair finds rules ---------------------
{
  echo "%%MatrixMarket matrix coordinate real general"
  echo "8 6 28"
  for r in 1 2 3 4 5 6 7 8; do
    case $((r % 3)) in
      0) for c in 1 2 3 4; do echo "$r $c 2"; done ;;
      1) for c in 2 3 4 5; do echo "$r $c 1.5"; done ;;
      2) for c in 1 3 5 6; do echo "$r $c 3"; done ;;
    esac
  done
} | awk 'NR<=2 || NF==3' > m.mtx
# Fix the entry count line to the real number of entries.
entries=$(($(wc -l < m.mtx) - 2))
sed -i "2s/.*/8 6 $entries/" m.mtx
run 0 "$kcla" compress m.mtx -o m.h5
has out.txt "compressed m.mtx -> m.h5"
[ -f m.h5 ] || fail "m.h5 not written"
run 0 "$kcla" info m.h5
has out.txt "shape +8 x 6, nnz $entries"
for s in plus_times boolean min_plus; do
  run 0 "$kcla" multiply m.h5 --semiring "$s" --verify --repeat 2
  has out.txt "verify: .*OK"
  run 0 "$kcla" multiply m.h5 --semiring "$s" --batch 5 --verify --repeat 2
  has out.txt "verify: .*OK"
done
# The cost model's prediction beside the measured time (right products only).
has out.txt "^model: [0-9.]+ ms predicted \([+-][0-9]+ % of the measured time\)"
run 0 "$kcla" multiply m.h5 --transpose --verify --repeat 1
if grep -q "^model:" out.txt; then fail "a left product printed the right product's prediction"; fi
# A workspace bound below one vector's slots: the batch runs a vector at a time.
run 0 "$kcla" multiply m.h5 --batch 5 --workspace 8 --verify --repeat 1
has out.txt "verify: .*OK"
run 2 "$kcla" multiply m.h5 --workspace 12Q
# The terminal table is a GPU form: host back ends accept the option and run as before.
run 0 "$kcla" multiply m.h5 --leaf-table always --launch dataflow --verify --repeat 2
has out.txt "verify: .*OK"
run 2 "$kcla" multiply m.h5 --leaf-table sometimes
# So is the row phase's chunk size; a negative size is refused.
run 0 "$kcla" multiply m.h5 --row-chunk 64 --launch dataflow --verify --repeat 2
has out.txt "verify: .*OK"
run 2 "$kcla" multiply m.h5 --row-chunk -5
# And the ticketed kernels' row tickets.
for tickets in rows chunks; do
  run 0 "$kcla" multiply m.h5 --row-tickets "$tickets" --launch dataflow --verify --repeat 2
  has out.txt "verify: .*OK"
done
run 2 "$kcla" multiply m.h5 --row-tickets some
run 0 "$kcla" multiply m.h5 --precision fp64 --schedule layered --launch per_level --verify --repeat 2
has out.txt "schedule layered/per_level"
# y = M x with x = 1: row sums 6 (rows 1, 4, 7), 12 (rows 2, 5, 8), 8 (rows 3, 6).
printf '1\n1\n1\n1\n1\n1\n' > x.txt
run 0 "$kcla" multiply m.h5 --x x.txt -o y.txt --repeat 1
[ "$(tr '\n' ' ' < y.txt)" = "6 12 8 6 12 8 6 12 " ] || fail "y.txt is '$(tr '\n' ' ' < y.txt)'"
# --repeat 0: one product, no warm-up, timed cold; the same y.
run 0 "$kcla" multiply m.h5 --x x.txt -o y_cold.txt --repeat 0
has out.txt "ms per product \(one product, cold: plan and workspace included\)"
cmp -s y.txt y_cold.txt || fail "--repeat 0 gives another y"
run 2 "$kcla" multiply m.h5 --compare --repeat 0
has err.txt "--compare times every product after a warm-up"
# --compare: every baseline of this back end on the same x, checked and timed.
run 0 "$kcla" multiply m.h5 --compare --repeat 2
has out.txt "best baseline: .* kcla is [0-9.]+x (faster|slower)"
run 0 "$kcla" multiply m.h5 --compare --batch 3 --repeat 2
has out.txt "best baseline: "
if grep -q "disagrees" out.txt; then fail "a baseline disagrees with the host product"; fi
# The input file may be compressed on the fly too.
run 0 "$kcla" multiply m.mtx --verify --repeat 1 --quiet

# --- kcla generate: a synthetic panel streamed to PLINK, then read back -------------------
run 0 "$kcla" generate --samples 50 --variants 300 --seed 5 --threads 2 -o gen
has out.txt "generated gen.bed/.bim/.fam: 50 samples x 300 variants"
[ "$(wc -l < gen.fam)" -eq 50 ] && [ "$(wc -l < gen.bim)" -eq 300 ] || fail "gen.fam/.bim lines"
[ "$(stat -c %s gen.bed)" -eq $((3 + 300 * 13)) ] || fail "gen.bed is not 3 + 300 x 13 bytes"
run 0 "$kcla" generate --samples 50 --variants 300 --seed 5 --threads 1 --block-cols 7 -o gen2.bed
cmp -s gen.bed gen2.bed || fail "kcla generate depends on the thread count or block width"
run 0 "$kcla" info gen.bed
has out.txt "shape +50 x 300"
has out.txt "GPU model \(B=1 *\) full array [0-9]+ levels [0-9.]+ ms \((graph|dataflow)\) \| [0-9]+ phases [0-9.]+ ms \((graph|dataflow), "
has out.txt "GPU model \(B=64 *\)"
has out.txt "instead: CSR SpMV [0-9.]+ ms \| dense GEMV [0-9.]+ ms \| 2-bit GEMV"
run 0 "$kcla" multiply gen --verify --repeat 1 --quiet
has out.txt "verify: .*OK"
run 2 "$kcla" generate --samples 50 -o x
run 2 "$kcla" generate --samples 50 --variants 10 --ploidy 3 -o x
has err.txt "ploidy must be 1 or 2"
run 1 "$kcla" generate --samples 5 --variants 10 -o no/such/dir/x
has err.txt "no/such/dir/x"

# --- usage errors: exit 2 ---------------------------------------------------------------
run 2 "$kcla"
run 2 "$kcla" frobnicate
run 2 "$kcla" multiply
run 2 "$kcla" multiply m.h5 --semiring tropical-ish
run 2 "$kcla" multiply m.h5 --batch 0
run 2 "$kcla" multiply m.h5 --compare --semiring boolean
has err.txt "plus_times fp32"
run 2 "$kcla" compress m.mtx
run 2 "$kcla" compress m.mtx -o out.h5 --bogus 1
has err.txt "unknown option --bogus"
# The declarations check types and ranges, name the option, and write --help.
run 2 "$kcla" multiply m.h5 --repeat many
has err.txt "--repeat: expects an integer, got 'many'"
run 2 "$kcla" multiply m.h5 --batch=-3
has err.txt "--batch: expects an integer >= 1, got -3"
run 2 "$kcla" multiply m.h5 --repeat 2 --repeat 3
has err.txt "--repeat"
run 2 "$kcla" multiply m.h5 extra.h5
has err.txt "unexpected argument 'extra.h5'"
run 2 "$kcla" compress m.mtx -o out.h5 --memory-limit 12Q
has err.txt "--memory-limit: '12Q' is not a size"
run 2 "$kcla" generate --samples 5 --variants 10 --switch-rate nan -o x
has err.txt "--switch-rate: expects a number"
for command in compress info multiply score pca assoc generate demo; do
  run 0 "$kcla" "$command" --help
  has out.txt "^usage: kcla $command"
  has out.txt "^  -h,--help"
done
run 0 "$kcla" multiply -h
has out.txt "--semiring \\{plus_times\\|boolean\\|min_plus\\}"

# --- bad input: exit 1, the file named --------------------------------------------------
run 1 "$kcla" info missing.mtx
has err.txt "missing.mtx"
echo "not a matrix" > bad.mtx
run 1 "$kcla" compress bad.mtx -o bad.h5
has err.txt "bad.mtx: line 1"
[ ! -e bad.h5 ] || fail "a failed compress left bad.h5 behind"
head -c 200 m.h5 > truncated.h5
run 1 "$kcla" info truncated.h5
has err.txt "truncated.h5"
printf '1\n2\n' > short.txt
run 1 "$kcla" multiply m.h5 --x short.txt
has err.txt "short.txt: holds 2 values, expected cols x B = 6"
printf '1\n1\n1 zz\n1\n' > word.txt
run 1 "$kcla" multiply m.h5 --x word.txt
has err.txt "word.txt: value 4 \('zz'\) is not a number"
printf '1 1 1 1 1 1e999\n' > huge.txt
run 1 "$kcla" multiply m.h5 --x huge.txt
has err.txt "huge.txt: value 6 \('1e999'\) is not a number"
# float32 input (.bin): the same y as the text file.
printf '\x00\x00\x80\x3f%.0s' 1 2 3 4 5 6 > ones.bin
run 0 "$kcla" multiply m.h5 --x ones.bin -o y_bin.txt --repeat 1
cmp -s y.txt y_bin.txt || fail "--x ones.bin gives another y than --x x.txt"
head -c 23 ones.bin > odd.bin
run 1 "$kcla" multiply m.h5 --x odd.bin
has err.txt "odd.bin: size is not a multiple of 4 bytes"
echo "all grammar CLI checks passed"
