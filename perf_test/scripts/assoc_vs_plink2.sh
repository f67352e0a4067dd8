#!/usr/bin/env bash
# `kcla assoc` against `plink2 --glm hide-covar` on a PLINK fileset, in one run: for every
# phenotype and variant the same A1, OBS_CT and ERRCODE, and BETA, SE, T_STAT and P within
# 1e-4 relative; both programs' whole-process times.
#
#   perf_test/scripts/assoc_vs_plink2.sh PLINK_BASE [options]
#     --kcla PATH       the kcla program (default: build/tools/kcla)
#     --pheno FILE      phenotypes (default: the .fam's sixth column)
#     --pheno-name A,B  only these phenotypes (both programs)
#     --covar FILE      covariates (without: plink2 runs with allow-no-covars)
#     --omit-ref        plink2's omit-ref modifier and kcla's --a1 alt (A1 = ALT always);
#                       without it both count the founders' minor allele
#     --threads N       threads of both programs (default 2)
#     --kcla-args "..." extra kcla assoc options (e.g. "--backend cuda")
#     --work DIR        folder for the outputs (default: a temporary one, removed)
#     --grammar F.h5    kcla reads F.h5 (`kcla compress PLINK_BASE -o F.h5`, done before,
#                       untimed) instead of the fileset: no .bed read, no RePair
#
# Variants whose founders' ALT frequency is exactly 1/2 may differ in A1 (plink2 breaks
# such ties by rules of its own): there the statistics must agree up to the slope's sign.
# Exit status 1 on any other difference. Needs plink2 and python3.
set -euo pipefail
usage() { sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
kcla=build/tools/kcla
grammar=
threads=2
kcla_args=
pheno=
pheno_name=
covar=
omit_ref=
work=
positional=()
while [ $# -gt 0 ]; do
  case "$1" in
    --kcla) kcla=${2:?}; shift 2 ;;
    --pheno) pheno=$(realpath "${2:?}"); shift 2 ;;
    --pheno-name) pheno_name=${2:?}; shift 2 ;;
    --covar) covar=$(realpath "${2:?}"); shift 2 ;;
    --omit-ref) omit_ref=1; shift ;;
    --threads) threads=${2:?}; shift 2 ;;
    --kcla-args) kcla_args=${2:?}; shift 2 ;;
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
plink_args=(--bfile "$base" --threads "$threads")
kcla_opts=()
[ -n "$pheno" ] && plink_args+=(--pheno "$pheno") && kcla_opts+=(--pheno "$pheno")
[ -n "$pheno_name" ] && plink_args+=(--pheno-name "$pheno_name") && kcla_opts+=(--pheno-name "$pheno_name")
[ -n "$covar" ] && plink_args+=(--covar "$covar") && kcla_opts+=(--covar "$covar")
modifiers=(hide-covar)
[ -z "$covar" ] && modifiers+=(allow-no-covars)
[ -n "$omit_ref" ] && modifiers+=(omit-ref) && kcla_opts+=(--a1 alt)
now() { date +%s.%N; }
t0=$(now)
plink2 "${plink_args[@]}" --glm "${modifiers[@]}" --out p >/dev/null 2>&1 ||
  { echo "plink2 failed (see $work/p.log)"; exit 1; }
t1=$(now)
# shellcheck disable=SC2086
OMP_NUM_THREADS=$threads "$kcla" assoc "$kcla_input" "${kcla_opts[@]}" --threads "$threads" \
  $kcla_args -o k > k.txt
t2=$(now)
plink2 --bfile "$base" --freq --out f >/dev/null 2>&1 || { echo "plink2 --freq failed"; exit 1; }
python3 - "$t0" "$t1" "$t2" <<'PY'
import glob, math, sys
t0, t1, t2 = map(float, sys.argv[1:4])
ties = set()
for line in open("f.afreq"):
    x = line.split()
    if not line.startswith("#") and x[4] != "nan" and float(x[4]) == 0.5:
        ties.add(x[1])
def load(path):
    rows = {}
    for line in open(path):
        if not line.startswith("#"):
            x = line.split()
            rows[x[2]] = x
    return rows
ok = True
files = sorted(glob.glob("p.*.glm.linear"))
if not files:
    print("plink2 wrote no .glm.linear file"); sys.exit(1)
for pfile in files:
    name = pfile[2:-len(".glm.linear")]
    kfile = "k." + name + ".glm.linear"
    try:
        k = load(kfile)
    except OSError:
        print(f"{name}: kcla wrote no {kfile}"); ok = False; continue
    p = load(pfile)
    worst = [0.0] * 4
    problems, flipped = [], 0
    for vid, a in p.items():
        b = k.get(vid)
        if b is None:
            problems.append(f"{vid} absent from kcla's output"); continue
        if a[7] != b[7] or a[12] != b[12]:
            problems.append(f"{vid}: OBS_CT/ERRCODE {a[7]}/{a[12]} vs {b[7]}/{b[12]}"); continue
        sign = 1.0
        if a[5] != b[5]:
            if vid not in ties:
                problems.append(f"{vid}: A1 {a[5]} vs {b[5]}"); continue
            sign, flipped = -1.0, flipped + 1
        if a[8] == "NA":
            continue
        for i, (c, s) in enumerate(((8, sign), (9, 1.0), (10, sign), (11, 1.0))):
            u, v = float(a[c]), s * float(b[c])
            r = abs(u - v) / max(abs(u), 1e-300)
            worst[i] = max(worst[i], r)
            if r > 1e-4:
                problems.append(f"{vid}: column {c + 1} {a[c]} vs {b[c]}")
    extra = len(set(k) - set(p))
    if extra:
        problems.append(f"{extra} variants in kcla's output only")
    print(f"{name}: {len(p)} variants, max relative difference BETA {worst[0]:.2e} SE {worst[1]:.2e} "
          f"T_STAT {worst[2]:.2e} P {worst[3]:.2e}; A1 differs at {flipped} exact 50/50 variants")
    for line in problems[:10]:
        print("  " + line)
    ok = ok and not problems
print(f"time (whole process): plink2 --glm {t1 - t0:.2f} s, kcla assoc {t2 - t1:.2f} s")
print("agree" if ok else "DIFFER")
sys.exit(0 if ok else 1)
PY
