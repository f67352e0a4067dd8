#!/usr/bin/env bash
# Single-vector latency of the grammar sweep on the GPU machine (issue "single-vector gap"):
# the launch forms side by side, where each per-level kernel's time goes, the dataflow
# kernel's tests. Copy into a bundle made by
#   pack.sh --only kcla_bench_baselines --only kcla_test_grammar_multiply --only kcla
#           --data scrm2504.h5 --data EUR_subset.h5 --data mouse_hs1940.h5
#           --data HLC.bed.xz --data HLC.bim.xz --data HLC.fam
# as go.sh, then: bash BUNDLE/go.sh OUT
#   TESTS=0       skip kcla_test_grammar_multiply (and kcla_test_packed where the bundle
#                 holds it)
#   NCU=0         skip the per-kernel profile (Nsight Compute, one per-level product of
#                 each of NCU_PANELS, default HLC and mouse_hs1940: duration, DRAM and L2
#                 traffic of every kernel)
#   BENCH=0       skip kcla_bench_baselines (B = 1: every kcla form, cuSPARSE, 2-bit)
#   PANELS="..."  panel names (default: scrm2504 HLC EUR_subset mouse_hs1940)
# Each panel: the automatic choice; graph, fused and dataflow; graph and dataflow without
# the terminal table; the left product's graph and dataflow forms and its automatic form
# next to cuSPARSE's best transposed product (--compare).
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"  # here, programs, libraries
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
data=$(mktemp -d)
stage_panels "$data"
if [ "${TESTS:-1}" = 1 ]; then
  echo "== tests"
  for t in kcla_test_grammar_multiply kcla_test_packed; do
    [ -x "$here/bin/$t" ] || continue
    timeout 150 "$here/bin/$t" > "$out/$t.log" 2>&1
    echo "$t rc=$? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' "$out/$t.log" | tr '\n' ' ')"
    grep -E "^\[  FAILED  \]|Failure" -A4 "$out/$t.log" | head -16
  done
fi
echo "== HLC grammar"
"$here/bin/kcla" compress "$data/HLC" -o "$data/HLC.h5" --threads 16 --quiet 2>&1 | tail -1
panels=()
for p in ${PANELS:-scrm2504 HLC EUR_subset mouse_hs1940}; do panels+=("$data/$p.h5"); done
for p in "${panels[@]}"; do
  echo "-- $(basename "$p")"
  "$here/bin/kcla" info "$p" | grep -E "grammar|levels|GPU model \(B=1"
  timeout 60 "$here/bin/kcla" multiply "$p" --repeat 50 --verify --quiet 2>&1 |
    grep -E "^multiply|^time|verify" | sed 's/.*schedule //' | tr '\n' ' '
  echo "(automatic)"
  for launch in graph fused dataflow; do
    timeout 60 "$here/bin/kcla" multiply "$p" --schedule full_array --launch "$launch" \
      --repeat 50 --verify --quiet 2>&1 | grep -E "^time|verify" | tr '\n' ' '
    echo "($launch)"
  done
  for launch in graph dataflow; do
    timeout 60 "$here/bin/kcla" multiply "$p" --schedule full_array --launch "$launch" \
      --leaf-table never --repeat 50 --verify --quiet 2>&1 | grep -E "^time|verify" | tr '\n' ' '
    echo "($launch, no terminal table)"
  done
  for launch in graph dataflow; do
    timeout 60 "$here/bin/kcla" multiply "$p" --transpose --launch "$launch" \
      --repeat 50 --verify --quiet 2>&1 | grep -E "^time|verify" | tr '\n' ' '
    echo "(transpose, $launch)"
  done
  timeout 120 "$here/bin/kcla" multiply "$p" --transpose --compare --repeat 50 2>&1 |
    grep -E "^time|best baseline" | tr '\n' ' '
  echo "(transpose, automatic, cuSPARSE's best transposed)"
done
if [ "${NCU:-1}" = 1 ] && command -v ncu > /dev/null; then
  echo "== per-kernel profile (per_level launches, one product after a warm-up)"
  for name in ${NCU_PANELS:-HLC mouse_hs1940}; do
    p=$data/$name.h5
    timeout 120 ncu --clock-control none --kernel-name-base demangled \
      --kernel-name 'regex:Level|Rows|Fill|Chunk' --launch-skip 0 \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
      --print-units base --csv "$here/bin/kcla" multiply "$p" --schedule full_array --launch per_level --repeat 1 \
      --quiet > "$out/ncu_$name.csv" 2> "$out/ncu_$name.err"
    echo "$name rc=$? ($(grep -c gpu__time_duration "$out/ncu_$name.csv") kernels)"
    python3 - "$out/ncu_$name.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows: sys.exit()
h = rows[0]; rows = rows[1:]
ki, mi, vi, idi = h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value"), h.index("ID")
by = collections.OrderedDict()
for r in rows:
    by.setdefault(r[idi], {"kernel": r[ki]})[r[mi]] = float(r[vi].replace(",", ""))
ks = list(by.values())
ks = ks[len(ks) // 2:]  # the timed product (the first half is the warm-up)
tot = sum(k["gpu__time_duration.sum"] for k in ks)
print(f"  {len(ks)} kernels, {tot / 1e3:.1f} us in kernels")
for i, k in enumerate(ks):
    n = "Level" if "Level" in k["kernel"] else "Rows" if ("Rows" in k["kernel"] or "Chunk" in k["kernel"]) else "Fill"
    print(f"  {i:2d} {n:5s} {k['gpu__time_duration.sum'] / 1e3:8.2f} us  dram r {k['dram__bytes_read.sum'] / 1e6:7.2f} MB"
          f" w {k['dram__bytes_write.sum'] / 1e6:6.2f} MB  L2 sectors r {k['lts__t_sectors_srcunit_tex_op_read.sum'] / 1e6:6.2f} M"
          f" w {k['lts__t_sectors_srcunit_tex_op_write.sum'] / 1e6:5.2f} M  warps {k['sm__warps_active.avg.pct_of_peak_sustained_active']:5.1f} %")
PY
  done
fi
if [ "${BENCH:-1}" = 1 ]; then
  echo "== B = 1: every kcla form, cuSPARSE, 2-bit"
  timeout 300 "$here/bin/kcla_bench_baselines" --batch 1 --repeat 30 --energy-seconds 0 \
    --only kcla,cuSPARSE,2-bit --tsv "$out/latency_b1.tsv" "${panels[@]}" \
    > "$out/latency_b1.log" 2>&1
  echo "rc=$?"
  grep -vE "^\s*$" "$out/latency_b1.log" | grep -E "panel|kcla|best|^[A-Za-z/]" | head -100
fi
