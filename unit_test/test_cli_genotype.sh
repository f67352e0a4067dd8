#!/usr/bin/env bash
# End to end: `kcla score` against `plink2 --score` on a PLINK fileset with missing calls,
# scores of both alleles and two weight columns, in every centering x missing-call mode;
# `kcla multiply --transpose --verify` on the same fileset; the score file's errors.
#
#   test_cli_genotype.sh KCLA_BINARY WORK_DIR
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=cli_test_lib.sh
source "$here/cli_test_lib.sh"  # sets $kcla, $work; cd "$work"

command -v python3 >/dev/null || fail "python3 is needed (scripts/setup.sh installs it)"

# --- a haplotype-like fileset: 150 samples x 240 variants, 3% missing calls ------------
python3 - "$here" <<'PY'
import random, sys
sys.path.insert(0, sys.argv[1])
from plink_fixture import write_bed
rng = random.Random(20261202)
n, m = 150, 240
founders = [[rng.choice([0, 0, 0, 1, 2]) for _ in range(m)] for _ in range(5)]
calls = []
for i in range(n):
    f = founders[rng.randrange(5)]
    row = []
    for j in range(m):
        v = rng.randrange(3) if rng.random() < 0.08 else f[j]
        if j % 23 == 5:
            v = 0                       # monomorphic where present
        if rng.random() < 0.03:
            v = -1                      # missing
        row.append(v)
    calls.append(row)
with open("panel.fam", "w") as fam:
    for i in range(n):
        fam.write(f"f{i} s{i} 0 0 {1 + i % 2} -9\n")
with open("panel.bim", "w") as bim:
    for j in range(m):
        position = -9 if j == 10 else 1000 * (j + 1)   # PLINK ignores a negative coordinate
        bim.write(f"1\tv{j}\t0\t{position}\tA\tG\n")
write_bed("panel.bed", calls, n, m)
with open("score.txt", "w") as s:
    s.write("ID\tA1\tBETA\tOTHER\n")
    for j in range(m):
        if j % 23 == 5 or j % 7 == 0:
            continue                    # monomorphic variants and a few others unscored
        allele = "G" if j % 3 == 0 else "A"
        s.write(f"v{j}\t{allele}\t{rng.uniform(-1, 1):.6f}\t{rng.uniform(0, 2):.6f}\n")
PY
[ -s panel.bed ] || fail "the fileset was not written"

# compare KCLA PLINK: every score column within 1e-5 relative of the column's largest value
compare() {
  python3 - "$1" "$2" <<'PY' || fail "kcla's scores differ from plink2's ($1 vs $2)"
import sys
def load(path, suffix):
    with open(path) as f:
        head = f.readline().lstrip("#").split()
        cols = [k for k, h in enumerate(head) if h.endswith(suffix)]
        iid = head.index("IID")
        rows = {}
        for line in f:
            v = line.split()
            rows[v[iid]] = [float(v[k]) for k in cols]
    return rows
k, p = load(sys.argv[1], "_SUM"), load(sys.argv[2], "_SUM")
assert k.keys() == p.keys(), "different samples"
ncol = len(next(iter(p.values())))
assert ncol == 2 and len(next(iter(k.values()))) == 2, "expected two score columns"
for c in range(ncol):
    scale = max(abs(r[c]) for r in p.values()) or 1.0
    worst = max(abs(k[s][c] - p[s][c]) for s in p) / scale
    print(f"column {c}: max relative difference {worst:.2e}")
    assert worst <= 1e-5, worst
PY
}

if command -v plink2 >/dev/null; then
  for centering in "" center variance-standardize; do
    for imputation in "" no-mean-imputation; do
      name="p_${centering:-plain}_${imputation:-mean}"
      # shellcheck disable=SC2086
      run 0 plink2 --bfile panel --score score.txt 1 2 header-read cols=scoresums \
        $centering $imputation --score-col-nums 3-4 --nonfounders --out "$name"
      flags=()
      [ -n "$centering" ] && flags+=("--$centering")
      [ -n "$imputation" ] && flags+=("--$imputation")
      for precision in fp64 fp32; do
        run 0 "$kcla" score panel --score score.txt "${flags[@]}" --precision "$precision" \
          -o "$name.kcla.sscore"
        has out.txt "150 samples x 240 variants \(195 scored, [0-9]+ missing calls\), 2 score columns"
        has out.txt "note: 1 variants of the score file have a negative .bim coordinate"
        compare "$name.kcla.sscore" "$name.sscore"
      done
    done
  done
  # Principal components against plink2 --pca approx (the same definition: mean-imputed
  # standardized genotypes; the exact --pca normalizes each pair by its common calls).
  run 0 bash "$here/../perf_test/scripts/pca_vs_plink2.sh" panel --kcla "$kcla" \
    --components 3 --approx --work pca
  has out.txt "largest principal angle between the top-3 subspaces"
  has pca/k.txt "pca: 150 samples x 240 variants \(239 in the GRM, 1 non-autosomal or with a negative coordinate left out\)"
else
  echo "SKIP: plink2 not installed (scripts/setup.sh installs it); kcla score and pca not compared"
fi
run 2 "$kcla" pca panel --components 0
# --exact (the whole GRM) and the randomized solver agree on the top 3 eigenvalues.
run 0 "$kcla" pca panel --components 3 --exact -o exact
run 0 "$kcla" pca panel --components 3 -o randomized
paste exact.eigenval randomized.eigenval | awk '{ d = ($1 - $2) / $1; if (d < 0) d = -d;
  if (d > 1e-6) { print "eigenvalue " NR ": " $1 " vs " $2; bad = 1 } } END { exit bad }' ||
  fail "--exact and the randomized solver disagree"
run 0 "$kcla" pca panel --components 2 --precision fp32 -o f32
[ "$(wc -l < f32.eigenval)" -eq 2 ] || fail "f32.eigenval should hold 2 eigenvalues"
has f32.eigenvec "^#FID	IID	PC1	PC2$"

# A genotype grammar file: compressed once, then scored and analysed without the fileset
# (only the .h5 in its folder); the same results as from the fileset.
run 0 "$kcla" compress panel -o panel.h5
has out.txt "genotypes: 150 samples x 240 variants, [1-9][0-9]* missing calls"
run 0 "$kcla" info panel.h5
has out.txt "^genotypes: 150 samples x 240 variants, [1-9][0-9]* missing calls, counting A1"
mkdir alone && cp panel.h5 alone/
for flags in "" "--center" "--variance-standardize --no-mean-imputation"; do
  # shellcheck disable=SC2086
  run 0 "$kcla" score panel --score score.txt $flags -o from_fileset.sscore
  # shellcheck disable=SC2086
  run 0 "$kcla" score alone/panel.h5 --score score.txt $flags
  has out.txt "150 samples x 240 variants \(195 scored, [1-9][0-9]* missing calls\)"
  has out.txt "time: read grammar \+ statistics"
  has out.txt "wrote alone/panel.kcla.sscore"
  same from_fileset.sscore alone/panel.kcla.sscore
done
run 0 "$kcla" pca alone/panel.h5 --components 3 -o from_grammar
same randomized.eigenval from_grammar.eigenval
same randomized.eigenvec from_grammar.eigenvec
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n' > plain.mtx
# A block grammar file (kcla compress --block-cols: column blocks, the missing calls read in
# a second pass over the .bed): the same scores and components to rounding.
run 0 "$kcla" compress panel --block-cols 50 -o alone/blocks.h5
has out.txt "5 blocks of 50 columns"
has out.txt "genotypes: 150 samples x 240 variants, [1-9][0-9]* missing calls"
run 0 "$kcla" info alone/blocks.h5
has out.txt "^block grammar: shape 150 x 240"
has out.txt "^genotypes: 150 samples x 240 variants, [1-9][0-9]* missing calls, counting A1"
for flags in "" "--variance-standardize --no-mean-imputation"; do
  # shellcheck disable=SC2086
  run 0 "$kcla" score panel --score score.txt $flags -o from_fileset.sscore
  # shellcheck disable=SC2086
  run 0 "$kcla" score alone/blocks.h5 --score score.txt $flags
  has out.txt "150 samples x 240 variants \(195 scored, [1-9][0-9]* missing calls\)"
  has out.txt "wrote alone/blocks.kcla.sscore"
  same from_fileset.sscore alone/blocks.kcla.sscore 1e-10
done
run 0 "$kcla" pca alone/blocks.h5 --components 3 -o from_blocks
same randomized.eigenval from_blocks.eigenval 1e-9
same randomized.eigenvec from_blocks.eigenvec 1e-7
# A block grammar of a matrix that is no fileset has no genotype part: named.
run 0 "$kcla" compress plain.mtx --block-cols 1 -o plain_blocks.h5
run 1 "$kcla" pca plain_blocks.h5
has err.txt "plain_blocks.h5.*no genotype part"

# A grammar without the genotype part, and a damaged one, are named.
run 0 "$kcla" compress plain.mtx -o plain.h5
run 1 "$kcla" score plain.h5 --score score.txt
has err.txt "plain.h5.*no genotype part"
# A fileset whose .bim has only the two columns the matrix needs: a plain grammar, said so.
cp panel.bed short.bed && cp panel.fam short.fam && awk '{ print $1, $2 }' panel.bim > short.bim
run 0 "$kcla" compress short -o short.h5
has err.txt "warning: .*short.bim: line 1: expected 'chromosome snp cM position A1 A2'"
has err.txt "the grammar file has no genotype part"
run 1 "$kcla" assoc short.h5
has err.txt "short.h5.*no genotype part"
head -c 2000 panel.h5 > cut.h5
run 1 "$kcla" pca cut.h5
has err.txt "cut.h5"

# Monomorphic variants in a variance-standardized score: reported, they add nothing.
awk 'NR == 1 || NR % 5 != 0' score.txt > with_mono.txt
echo -e "v5\tA\t1.0\t1.0" >> with_mono.txt
run 0 "$kcla" score panel --score with_mono.txt --variance-standardize -o mono.sscore
has out.txt "warning: 1 scored variants have no variance"

# The transposed product on the same fileset, every semiring.
for s in plus_times boolean min_plus; do
  run 0 "$kcla" multiply panel.bed --transpose --semiring "$s" --batch 3 --verify --repeat 1
  has out.txt "multiply \(transposed, z = A\^T y\): 150 x 240"
  has out.txt "OK"
done
# The launch it names is the one that ran: host threads run the left product per level,
# whatever launch was asked for.
for launch in auto dataflow; do
  run 0 "$kcla" multiply panel.bed --transpose --launch "$launch" --repeat 1
  has out.txt "schedule transpose/per_level"
done

# Errors name the file and what is wrong.
echo -e "v1\tC\t1.0\t2.0" > bad_allele.txt
run 1 "$kcla" score panel --score bad_allele.txt
has err.txt "bad_allele.txt.*allele 'C' is neither A1 'A' nor A2 'G'"
echo -e "v1\tA\t1.0\nv2\tA\t1.0\t2.0" > ragged.txt
run 1 "$kcla" score panel --score ragged.txt
has err.txt "ragged.txt.*has 2 weights, the first line 1"
echo -e "v1\tA\t1.0\nv1\tA\t2.0" > twice.txt
run 1 "$kcla" score panel --score twice.txt
has err.txt "twice.txt.*'v1' appears twice"
run 2 "$kcla" score panel --score score.txt --center --variance-standardize
run 2 "$kcla" score panel
[ ! -e twice.sscore ] && [ ! -e panel.kcla.sscore.tmp ] || fail "a failed run left a file"
echo "PASS"
