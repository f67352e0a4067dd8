#!/usr/bin/env bash
# End to end: `kcla assoc` against `plink2 --glm hide-covar` on a PLINK fileset with
# missing calls, founders and non-founders, variants whose ALT allele is the major one
# (A1 = REF there), phenotypes and covariates with missing values, with and without
# covariates and with omit-ref; on mouse_hs1940 too when the data set is present; the
# errors and notes of bad input.
#
#   test_cli_assoc.sh KCLA_BINARY WORK_DIR [DATA_DIR]
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${3:-}
# shellcheck source=cli_test_lib.sh
source "$here/cli_test_lib.sh"  # sets $kcla, $work; cd "$work"

command -v python3 >/dev/null || fail "python3 is needed (scripts/setup.sh installs it)"

# --- 200 samples (150 founders) x 300 variants, 3% missing calls ------------------------
python3 - "$here" <<'PY'
import random, sys
sys.path.insert(0, sys.argv[1])
from plink_fixture import write_bed
rng = random.Random(20261203)
n, m = 200, 300
freq = [rng.choice([0.05, 0.2, 0.4, 0.6, 0.85]) for _ in range(m)]
calls = [[(rng.random() < freq[j]) + (rng.random() < freq[j]) for j in range(m)] for _ in range(n)]
for i in range(n):
    calls[i][7] = 1                      # constant: no statistics
    for j in range(m):
        if rng.random() < 0.03:
            calls[i][j] = -1             # missing
with open("panel.fam", "w") as fam:
    for i in range(n):
        parents = "0 0" if i < 150 else f"s{i - 150} s{i - 149}"
        fam.write(f"f{i} s{i} {parents} {1 + i % 2} {rng.gauss(0, 1):.6f}\n")
with open("panel.bim", "w") as bim:
    for j in range(m):
        position = -9 if j == 10 else 1000 * (j + 1)   # PLINK leaves a negative coordinate out
        bim.write(f"{1 + j // 150}\tv{j}\t0\t{position}\tA\tG\n")
write_bed("panel.bed", calls, n, m)
g = lambda i, j: max(calls[i][j], 0)
with open("pheno.txt", "w") as f:
    f.write("#FID\tIID\tQ1\tQ2\tCC\n")
    for i in range(n):
        q1 = 0.5 * g(i, 3) - 0.3 * g(i, 40) + rng.gauss(0, 1)
        q2 = "NA" if rng.random() < 0.1 else ("-9" if rng.random() < 0.05 else f"{50 + rng.gauss(0, 2):.5f}")
        f.write(f"f{i}\ts{i}\t{q1:.6f}\t{q2}\t{1 + (rng.random() < 0.4)}\n")
    f.write("other\tsample\t1.0\t2.0\t1\n")   # not in the fileset: ignored
with open("covar.txt", "w") as f:
    f.write("FID\tIID\tAGE\tPC1\n")
    for i in range(n):
        age = "NA" if i % 37 == 0 else f"{rng.randint(20, 70)}"
        f.write(f"f{i}\ts{i}\t{age}\t{rng.gauss(0, 1):.6f}\n")
PY
[ -s panel.bed ] || fail "the fileset was not written"

compare=$here/../perf_test/scripts/assoc_vs_plink2.sh
if command -v plink2 >/dev/null; then
  run 0 bash "$compare" panel --kcla "$kcla" --pheno pheno.txt --pheno-name Q1,Q2 \
    --covar covar.txt --work default
  has out.txt "^Q1: 299 variants"
  has out.txt "^Q2: 299 variants"
  has out.txt "^agree$"
  run 0 bash "$compare" panel --kcla "$kcla" --pheno pheno.txt --pheno-name Q1,Q2 \
    --covar covar.txt --omit-ref --work omit_ref
  has out.txt "^agree$"
  run 0 bash "$compare" panel --kcla "$kcla" --work no_covariates   # the .fam's phenotype
  has out.txt "^PHENO1: 299 variants"
  has out.txt "^agree$"
  # The fixture must exercise what it claims: A1 = REF somewhere, per-variant OBS_CT.
  awk '$6 == $4 && $4 != $5' default/k.Q1.glm.linear | grep -q . ||
    fail "no variant counts REF: the fixture lost its ALT-major variants"
  [ "$(awk 'NR > 1 { print $8 }' default/k.Q1.glm.linear | sort -u | wc -l)" -gt 3 ] ||
    fail "OBS_CT does not vary: the fixture lost its missing calls"
  if [ -n "$data" ] && [ -e "$data/mouse_hs1940.bed" ]; then
    awk 'BEGIN { OFS = "\t"; print "#FID", "IID", "P1", "P2", "P6" }
         { print $1, $2, $6, $8, $11 }' "$data/mouse_hs1940.fam" > mouse.pheno
    awk 'BEGIN { OFS = "\t"; print "#FID", "IID", "SEX", "C2" }
         { print $1, $2, $5, (NR % 50 == 0 ? "NA" : NR % 7) }' "$data/mouse_hs1940.fam" > mouse.covar
    run 0 bash "$compare" "$data/mouse_hs1940" --kcla "$kcla" --pheno mouse.pheno \
      --covar mouse.covar --work mouse
    has out.txt "^P1: 10300 variants"
    has out.txt "^agree$"
  else
    echo "SKIP: mouse_hs1940 absent (scripts/data/fetch.sh); compared on the fixture only"
  fi
else
  echo "SKIP: plink2 not installed (scripts/setup.sh installs it); kcla assoc not compared"
fi

# What kcla says and writes by itself.
run 0 "$kcla" assoc panel --pheno pheno.txt --covar covar.txt -o k64
has out.txt "assoc: 200 samples x 300 variants \(299 tested, [0-9]+ missing calls\), 2 covariates, 3 phenotypes"
has out.txt "note: phenotype 'CC' is case/control"
has out.txt "wrote k64.PHENO1.glm.linear"  # the .fam phenotype, as plink2 keeps it
has k64.Q1.glm.linear "^#CHROM	POS	ID	REF	ALT	A1	TEST	OBS_CT	BETA	SE	T_STAT	P	ERRCODE$"
has k64.Q1.glm.linear "	v7	.*	NA	NA	NA	NA	CONST_OMITTED_ALLELE$"
[ ! -e k64.CC.glm.linear ] || fail "a skipped phenotype got an output file"
# From the genotype grammar file that kcla compress writes: the same statistics.
run 0 "$kcla" compress panel -o panel.h5
run 0 "$kcla" assoc panel.h5 --pheno pheno.txt --covar covar.txt -o h5
has out.txt "time: read grammar"
for p in PHENO1 Q1 Q2; do cmp -s "k64.$p.glm.linear" "h5.$p.glm.linear" || fail "h5.$p differs"; done
# From a block grammar file (column blocks, kcla compress --block-cols): the same statistics
# to rounding (other grammars, other summation orders).
run 0 "$kcla" compress panel --block-cols 64 -o blocks.h5
has out.txt "5 blocks of 64 columns"
has out.txt "genotypes: 200 samples x 300 variants"
run 0 "$kcla" assoc blocks.h5 --pheno pheno.txt --covar covar.txt -o blocks
has out.txt "time: read grammar"
for p in PHENO1 Q1 Q2; do same "k64.$p.glm.linear" "blocks.$p.glm.linear" 1e-8; done
# Single-precision products: the same statistics to about 1e-4.
run 0 "$kcla" assoc panel --pheno pheno.txt --covar covar.txt --precision fp32 -o k32
paste k64.Q1.glm.linear k32.Q1.glm.linear | awk 'NR > 1 && $9 != "NA" {
  d = ($11 - $24); if (d < 0) d = -d; if (d > 1e-3 * (1 + ($11 < 0 ? -$11 : $11))) bad = 1 }
  END { exit bad }' || fail "fp32 and fp64 T_STAT differ by more than 1e-3"

# Errors name the file and what is wrong; nothing is left half-written.
run 2 "$kcla" assoc panel --pheno pheno.txt --pheno-name CC
has err.txt "no quantitative phenotype"
run 2 "$kcla" assoc panel --pheno pheno.txt --pheno-name Q9
has err.txt "--pheno-name: no column 'Q9'"
run 2 "$kcla" assoc panel --covar-name AGE
run 2 "$kcla" assoc panel --a1 major
printf '#FID\tIID\tQ\nf0\ts0\t1.5\nf1\ts1\tabc\n' > bad_value.txt
run 1 "$kcla" assoc panel --pheno bad_value.txt -o bad
has err.txt "bad_value.txt.*line 3.*value 'abc' is not a number"
printf 'f0\ts0\t1.5\nf0\ts0\t2.5\n' > twice.txt
run 1 "$kcla" assoc panel --pheno twice.txt -o bad
has err.txt "twice.txt.*sample 's0' appears twice"
printf '#FID\tIID\tA\tB\nf0\ts0\t1.5\n' > ragged.txt
run 1 "$kcla" assoc panel --covar ragged.txt -o bad
has err.txt "ragged.txt.*has 3 fields, expected 4"
printf '#FID\tIID\tA\nnobody\tknown\t1.5\n' > strangers.txt
run 1 "$kcla" assoc panel --covar strangers.txt -o bad
has err.txt "strangers.txt.*no sample of the fileset has every covariate"
ls bad.* 2>/dev/null && fail "a failed run left output files"
echo "PASS"
