#!/usr/bin/env bash
# Times kcla's batched host product against PLINK 2 scoring the same weights, in one run:
# both compute Y = G W, G the fileset's A1 allele counts (a missing call counts 0: plink2's
# no-mean-imputation, kcla's PLINK reader) and W B weight columns, on the same threads.
#
#   perf_test/scripts/host_vs_plink2.sh PLINK_BASE GRAMMAR.h5 [options]
#     --kcla PATH     the kcla program (default: build/tools/kcla)
#     --batch B       weight columns (default 64)
#     --threads N     threads of both programs (default 2)
#     --runs N        whole-process runs of each and timed kcla products, medians (default 3)
#     --work DIR      folder for the weights and outputs (default: a temporary one, removed)
#
# GRAMMAR.h5 is `kcla compress PLINK_BASE -o GRAMMAR.h5`. plink2's time is its whole
# process (reading the .bed, the weights, scoring, writing); kcla's product time is its
# median per product (kcla multiply --repeat), and its whole process one-shot (--repeat 0:
# reading the grammar and the weights, one product, writing the scores), runs alternating
# with plink2's. Needs plink2 (Debian package plink2) and python3.
set -euo pipefail

usage() { sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
kcla=build/tools/kcla
batch=64
threads=2
runs=3
work=
positional=()
while [ $# -gt 0 ]; do
  case "$1" in
    --kcla) kcla=${2:?}; shift 2 ;;
    --batch) batch=${2:?}; shift 2 ;;
    --threads) threads=${2:?}; shift 2 ;;
    --runs) runs=${2:?}; shift 2 ;;
    --work) work=${2:?}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    *) positional+=("$1"); shift ;;
  esac
done
[ ${#positional[@]} -eq 2 ] || { usage >&2; exit 2; }
base=${positional[0]}
grammar=${positional[1]}
for f in "$base.bed" "$base.bim" "$base.fam" "$grammar"; do
  [ -f "$f" ] || { echo "missing $f" >&2; exit 1; }
done
command -v plink2 >/dev/null || { echo "plink2 not found (apt-get install plink2)" >&2; exit 1; }
[ -x "$kcla" ] || { echo "kcla program $kcla not found (--kcla)" >&2; exit 1; }
if [ -z "$work" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

# Weights: multiples of 1/128 in [-1, 1), exact in float32, so both programs read the
# same numbers: text for plink2 (ID, A1, W1..WB), float32 variants x B for kcla.
python3 - "$base.bim" "$batch" "$work/weights.txt" "$work/weights.bin" <<'EOF'
import random, struct, sys
bim, batch, text_path, bin_path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rng = random.Random(1)
as_text = ["%.8g" % ((b - 128) / 128) for b in range(256)]
as_float = [struct.pack("<f", (b - 128) / 128) for b in range(256)]
with open(bim) as f, open(text_path, "w") as t, open(bin_path, "wb") as w:
    t.write("ID\tA1\t" + "\t".join("W%d" % (i + 1) for i in range(batch)) + "\n")
    for line in f:
        fields = line.split()
        if not fields:
            continue
        row = rng.randbytes(batch)
        t.write(fields[1] + "\t" + fields[4] + "\t" + "\t".join(as_text[b] for b in row) + "\n")
        w.write(b"".join(as_float[b] for b in row))
EOF

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.3f\n", b - a}'; }

: > "$work/plink2_times"
: > "$work/kcla_times"
# Whole processes in turn (plink2, then kcla's one-shot run: one product, no warm-up), so
# that a drift of the machine's speed hits both.
for ((i = 0; i < runs; ++i)); do
  start=$(now)
  plink2 --bfile "$base" --score "$work/weights.txt" 1 2 header-read no-mean-imputation \
    cols=scoresums --score-col-nums 3-$((batch + 2)) --threads "$threads" \
    --out "$work/plink2" > "$work/plink2.stdout"
  elapsed "$start" >> "$work/plink2_times"
  start=$(now)
  OMP_NUM_THREADS=$threads OMP_PROC_BIND=false "$kcla" multiply "$grammar" --batch "$batch" \
    --backend openmp --repeat 0 --x "$work/weights.bin" -o "$work/kcla_scores.txt" --quiet \
    > "$work/kcla_once.stdout"
  elapsed "$start" >> "$work/kcla_times"
done
plink2_wall=$(median < "$work/plink2_times")
kcla_wall=$(median < "$work/kcla_times")

# The product alone: the median of `runs` products after a warm-up.
OMP_NUM_THREADS=$threads OMP_PROC_BIND=false "$kcla" multiply "$grammar" --batch "$batch" \
  --backend openmp --repeat "$runs" --x "$work/weights.bin" --quiet > "$work/kcla.stdout"
kcla_product=$(awk '/^time:/ {print $2 / 1000}' "$work/kcla.stdout")

echo "fileset $base, $batch weight columns, $threads threads"
printf '%-44s %10s\n' "" "seconds"
printf '%-44s %10.3f\n' "plink2 --score (whole process, median of $runs)" "$plink2_wall"
printf '%-44s %10.3f\n' "kcla multiply: product (median of $runs)" "$kcla_product"
printf '%-44s %10.3f\n' "kcla multiply --repeat 0 (whole process, median of $runs)" "$kcla_wall"
grep '^multiply:' "$work/kcla.stdout" | sed 's/^/kcla /'

# The same product: every score of every sample, kcla (fp32) against plink2 (double).
python3 - "$work/plink2.sscore" "$work/kcla_scores.txt" "$batch" <<'EOF'
import sys
sscore, kcla_path, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(sscore) as f:
    header = f.readline().split()
    first = len(header) - batch
    plink = [[float(v) for v in line.split()[first:]] for line in f]
with open(kcla_path) as f:
    kcla = [[float(v) for v in line.split()] for line in f]
if len(plink) != len(kcla):
    sys.exit("check: plink2 scored %d samples, kcla %d rows" % (len(plink), len(kcla)))
num = sum((a - b) ** 2 for pr, kr in zip(plink, kcla) for a, b in zip(pr, kr))
den = sum(a * a for pr in plink for a in pr)
error = (num / den) ** 0.5 if den > 0 else num ** 0.5
ok = error <= 1e-5
print("check: %d samples x %d scores, relative error kcla vs plink2 %.2g: %s"
      % (len(plink), batch, error, "OK" if ok else "FAILED"))
print("  sample 1, scores 1-3: plink2 %s, kcla %s" % (plink[0][:3], kcla[0][:3]))
sys.exit(0 if ok else 1)
EOF
