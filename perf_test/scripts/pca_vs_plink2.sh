#!/usr/bin/env bash
# `kcla pca` against `plink2 --pca` on a PLINK fileset, in one run: eigenvalues (relative
# difference), each eigenvector's |correlation| with plink2's, the principal angles between
# the two top-K subspaces, and both programs' whole-process times.
#
#   perf_test/scripts/pca_vs_plink2.sh PLINK_BASE [options]
#     --kcla PATH       the kcla program (default: build/tools/kcla)
#     --components K    (default 10)
#     --threads N       threads of both programs (default 2)
#     --kcla-args "..." extra kcla pca options (e.g. "--backend cuda --iterations 20")
#     --approx          compare with `plink2 --pca approx` (its randomized solver on the
#                       mean-imputed matrix: kcla's definition) instead of the exact --pca,
#                       whose GRM divides each pair by the variants both samples have a call
#                       for (the two agree on filesets without missing calls)
#     --work DIR        folder for the outputs (default: a temporary one, removed)
#     --grammar F.h5    kcla reads F.h5 (`kcla compress PLINK_BASE -o F.h5`, done before,
#                       untimed) instead of the fileset: no .bed read, no RePair
#
# plink2 runs with --nonfounders and --bad-freqs (kcla's frequencies are over every sample).
# Exit status 1 when an eigenvalue differs by more than 1 %, one of the top 5 eigenvectors
# correlates below 0.99 or a principal angle exceeds 5 degrees. Needs plink2 and python3.
set -euo pipefail
usage() { sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
kcla=build/tools/kcla
grammar=
components=10
threads=2
kcla_args=
approx=
work=
positional=()
while [ $# -gt 0 ]; do
  case "$1" in
    --kcla) kcla=${2:?}; shift 2 ;;
    --components) components=${2:?}; shift 2 ;;
    --threads) threads=${2:?}; shift 2 ;;
    --kcla-args) kcla_args=${2:?}; shift 2 ;;
    --grammar) grammar=$(realpath "${2:?}"); shift 2 ;;
    --work) work=${2:?}; shift 2 ;;
    --approx) approx=approx; shift ;;
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
now() { date +%s.%N; }
t0=$(now)
# shellcheck disable=SC2086
plink2 --bfile "$base" --pca $approx "$components" --nonfounders --bad-freqs --threads "$threads" \
  --out p >/dev/null 2>&1 || { echo "plink2 failed (see $work/p.log)"; exit 1; }
t1=$(now)
# shellcheck disable=SC2086
OMP_NUM_THREADS=$threads "$kcla" pca "$kcla_input" --components "$components" --threads "$threads" \
  $kcla_args -o k > k.txt
t2=$(now)
cat k.txt
python3 - "$components" "$t0" "$t1" "$t2" <<'PY'
import math, sys
k = int(sys.argv[1])
t0, t1, t2 = map(float, sys.argv[2:5])
def vectors(path):
    with open(path) as f:
        head = f.readline().lstrip("#").split()
        iid = head.index("IID")
        pcs = [head.index(f"PC{c + 1}") for c in range(k)]
        return {v[iid]: [float(v[i]) for i in pcs] for v in (l.split() for l in f)}
ev_p = [float(l) for l in open("p.eigenval")][:k]
ev_k = [float(l) for l in open("k.eigenval")][:k]
vp, vk = vectors("p.eigenvec"), vectors("k.eigenvec")
ids = sorted(vp)
P = [[vp[s][c] for s in ids] for c in range(k)]
K = [[vk[s][c] for s in ids] for c in range(k)]
def corr(a, b):
    n = len(a); ma = sum(a) / n; mb = sum(b) / n
    sab = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    saa = sum((x - ma) ** 2 for x in a); sbb = sum((y - mb) ** 2 for y in b)
    return sab / math.sqrt(saa * sbb)
def orthonormal(cols):
    out = []
    for c in cols:
        v = c[:]
        for q in out:
            d = sum(x * y for x, y in zip(v, q)); v = [x - d * y for x, y in zip(v, q)]
        n = math.sqrt(sum(x * x for x in v)); out.append([x / n for x in v])
    return out
def jacobi_eigenvalues(a):
    n = len(a); a = [r[:] for r in a]
    for _ in range(100):
        off = sum(a[i][j] ** 2 for i in range(n) for j in range(n) if i != j)
        if off < 1e-30: break
        for p in range(n):
            for q in range(p + 1, n):
                if abs(a[p][q]) < 1e-300: continue
                th = 0.5 * math.atan2(2 * a[p][q], a[q][q] - a[p][p]); c, s = math.cos(th), math.sin(th)
                for r in range(n):
                    ap, aq = a[r][p], a[r][q]; a[r][p], a[r][q] = c * ap - s * aq, s * ap + c * aq
                for r in range(n):
                    ap, aq = a[p][r], a[q][r]; a[p][r], a[q][r] = c * ap - s * aq, s * ap + c * aq
    return [a[i][i] for i in range(n)]
Qp, Qk = orthonormal(P), orthonormal(K)
M = [[sum(x * y for x, y in zip(Qp[i], Qk[j])) for j in range(k)] for i in range(k)]
MtM = [[sum(M[r][i] * M[r][j] for r in range(k)) for j in range(k)] for i in range(k)]
sv = sorted(math.sqrt(max(0.0, min(1.0, e))) for e in jacobi_eigenvalues(MtM))
angles = [math.degrees(math.acos(s)) for s in sv]
ok = True
print(f"{'PC':>3} {'plink2 eigenvalue':>18} {'kcla':>14} {'rel. diff':>10} {'|corr|':>9}")
for c in range(k):
    rel = abs(ev_k[c] - ev_p[c]) / abs(ev_p[c]); r = abs(corr(P[c], K[c]))
    print(f"{c + 1:>3} {ev_p[c]:>18.6g} {ev_k[c]:>14.6g} {rel:>10.2e} {r:>9.6f}")
    ok &= rel <= 0.01 and (c >= 5 or r >= 0.99)
print(f"largest principal angle between the top-{k} subspaces: {max(angles):.3f} degrees")
ok &= max(angles) <= 5
print(f"time (whole process): plink2 {t1 - t0:.2f} s, kcla {t2 - t1:.2f} s")
sys.exit(0 if ok else 1)
PY
