#!/usr/bin/env bash
# `kcla score` against `plink2 --score` on a real fileset, in one run: the same random
# weights (K columns, every variant, alleles A1 and A2 mixed), every centering x missing-call
# mode; reports the largest relative difference per mode (score columns scaled by their
# largest magnitude) and both programs' whole-process times.
#
#   perf_test/scripts/score_vs_plink2.sh PLINK_BASE [options]
#     --kcla PATH     the kcla program (default: build/tools/kcla)
#     --columns K     weight columns (default 4)
#     --threads N     threads of both programs (default 2)
#     --work DIR      folder for the weights and outputs (default: a temporary one, removed)
#     --grammar F.h5  kcla reads F.h5 (`kcla compress PLINK_BASE -o F.h5`, done before,
#                     untimed) instead of the fileset: no .bed read, no RePair
#
# plink2 runs with --nonfounders (kcla's frequencies are over every sample with a call) and
# --bad-freqs (small panels). Needs plink2 and python3. Exit status 1 when a mode differs by
# more than 1e-5.
set -euo pipefail

usage() { sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
kcla=build/tools/kcla
grammar=
columns=4
threads=2
work=
positional=()
while [ $# -gt 0 ]; do
  case "$1" in
    --kcla) kcla=${2:?}; shift 2 ;;
    --columns) columns=${2:?}; shift 2 ;;
    --threads) threads=${2:?}; shift 2 ;;
    --grammar) grammar=$(realpath "${2:?}"); shift 2 ;;
    --work) work=${2:?}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    *) positional+=("$1"); shift ;;
  esac
done
[ ${#positional[@]} -eq 1 ] || { usage >&2; exit 2; }
# shellcheck source=plink2_compare_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/plink2_compare_lib.sh"
enter_work_dir "${positional[0]}"
kcla_input=${grammar:-$base}

python3 - "$base.bim" "$columns" <<'PY'
import random, sys
rng = random.Random(7)
k = int(sys.argv[2])
with open(sys.argv[1]) as bim, open("weights.txt", "w") as out:
    out.write("ID\tA\t" + "\t".join(f"W{c + 1}" for c in range(k)) + "\n")
    for line in bim:
        f = line.split()
        if len(f) < 6:
            continue
        allele = f[4] if rng.random() < 0.7 else f[5]
        out.write(f"{f[1]}\t{allele}\t" + "\t".join(f"{rng.gauss(0, 1):.6f}" for _ in range(k)) + "\n")
PY

# plink2 stops on a variant without variance under variance-standardize (kcla gives it a
# zero map) and refuses that mode on chrX/Y/MT: it scores only autosomal variants whose
# frequency is strictly in (0, 1).
plink2 --bfile "$base" --freq --nonfounders --bad-freqs --threads "$threads" --out f >/dev/null 2>&1
python3 - <<'PY'
poly = set()
with open("f.afreq") as f:
    head = f.readline().lstrip("#").split()
    c, i, q = head.index("CHROM"), head.index("ID"), head.index("ALT_FREQS")
    for line in f:
        v = line.split()
        if 0 < float(v[q]) < 1 and v[c] not in ("X", "Y", "XY", "MT", "23", "24", "25", "26"):
            poly.add(v[i])
with open("weights.txt") as src, open("weights_vs.txt", "w") as out:
    out.write(src.readline())
    for line in src:
        if line.split()[0] in poly:
            out.write(line)
PY

compare() {
  python3 - "$1" "$2" <<'PY'
import sys
def load(path):
    with open(path) as f:
        head = f.readline().lstrip("#").split()
        cols = [i for i, h in enumerate(head) if h.endswith("_SUM")]
        iid = head.index("IID")
        return {v[iid]: [float(v[i]) for i in cols] for v in (l.split() for l in f)}
k, p = load(sys.argv[1]), load(sys.argv[2])
worst = 0.0
for c in range(len(next(iter(p.values())))):
    scale = max(abs(r[c]) for r in p.values()) or 1.0
    worst = max(worst, max(abs(k[s][c] - p[s][c]) for s in p) / scale)
print(f"{worst:.2e}")
PY
}

now() { date +%s.%N; }
status=0
printf "%-36s %12s %12s %14s\n" "mode" "plink2 s" "kcla s" "max rel. diff"
for centering in "" center variance-standardize; do
  for imputation in "" no-mean-imputation; do
    mode="${centering:-plain} ${imputation:-mean-imputation}"
    weights=weights.txt
    [ "$centering" = variance-standardize ] && weights=weights_vs.txt
    t0=$(now)
    # shellcheck disable=SC2086
    plink2 --bfile "$base" --score "$weights" 1 2 header-read cols=scoresums $centering \
      $imputation --score-col-nums "$( [ "$columns" = 1 ] && echo 3 || echo 3-$((columns + 2)))" --nonfounders --bad-freqs \
      --threads "$threads" --out p >/dev/null 2>&1 || { echo "$mode: plink2 failed (see $work/p.log)"; status=1; continue; }
    t1=$(now)
    flags=()
    [ -n "$centering" ] && flags+=("--$centering")
    [ -n "$imputation" ] && flags+=("--$imputation")
    OMP_NUM_THREADS=$threads "$kcla" score "$kcla_input" --score "$weights" "${flags[@]}" \
      --threads "$threads" -o k.sscore > k.txt
    t2=$(now)
    diff=$(compare k.sscore p.sscore)
    printf "%-36s %12.2f %12.2f %14s\n" "$mode" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" "$diff"
    python3 -c "import sys; sys.exit(0 if float('$diff') <= 1e-5 else 1)" || status=1
  done
done
grep "time:" k.txt
exit $status
