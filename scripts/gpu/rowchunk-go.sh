#!/usr/bin/env bash
# The device row phase's chunk size on the GPU machine (issue "single-vector gap"): per
# panel the automatic launch next to cuSPARSE's best (--compare), graph and dataflow at the
# automatic chunk and at forced chunk sizes (--row-chunk), the left product next to
# cuSPARSE's best transposed, and the per-level row kernel of HLC under Nsight Compute.
# Copy into a bundle made as for latency-go.sh (kcla_test_grammar_multiply, kcla, the four
# panels) as go.sh, then: bash BUNDLE/go.sh OUT
#   CHUNKS="2048 8192 32768"  forced chunk sizes;  PANELS="..."  panel names
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"  # here, programs, libraries
out=$1
mkdir -p "$out"
kcla=$here/bin/kcla
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
data=$(mktemp -d)
stage_panels "$data"
if [ "${TESTS:-1}" = 1 ]; then
  timeout 150 "$here/bin/kcla_test_grammar_multiply" > "$out/grammar_multiply.log" 2>&1
  echo "kcla_test_grammar_multiply rc=$? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' "$out/grammar_multiply.log" | tr '\n' ' ')"
  grep -E "^\[  FAILED  \]|Failure" -A4 "$out/grammar_multiply.log" | head -16
fi
"$kcla" compress "$data/HLC" -o "$data/HLC.h5" --threads 16 --quiet 2>&1 | tail -1
best_cusparse() {  # the fastest cuSPARSE line of a --compare output
  grep -E "cuSPARSE" "$1" | sed -E 's/.*cuSPARSE ([^:]*)[: ]+([0-9.]+) ms.*/\2 \1/' | sort -n | head -1
}
for name in ${PANELS:-scrm2504 HLC EUR_subset mouse_hs1940}; do
  p=$data/$name.h5
  echo "-- $name"
  timeout 120 "$kcla" multiply "$p" --compare --repeat 50 --verify > "$out/$name-right.txt" 2>&1
  echo "automatic: $(grep -E '^[a-z_/]*time|^time' "$out/$name-right.txt" | head -1 | sed 's/ per vector.*//') | cuSPARSE best: $(best_cusparse "$out/$name-right.txt") | $(grep -o 'verify.*OK' "$out/$name-right.txt" | head -1)"
  for launch in graph dataflow; do
    for chunk in 0 ${CHUNKS:-2048 8192 32768}; do
      t=$(timeout 60 "$kcla" multiply "$p" --schedule full_array --launch "$launch" --row-chunk "$chunk" \
        --repeat 50 --verify --quiet 2>&1 | grep -E "^time|verify" | sed -E 's/ per product.*//; s/.*relative error vs CSR product ([0-9.e-]+).*(OK|FAIL).*/\1 \2/' | tr '\n' ' ')
      echo "  $launch row-chunk $chunk: $t"
    done
  done
  timeout 120 "$kcla" multiply "$p" --transpose --compare --repeat 50 > "$out/$name-T.txt" 2>&1
  echo "transpose automatic: $(grep -E 'time' "$out/$name-T.txt" | head -1 | sed 's/ per vector.*//') | cuSPARSE best transposed: $(best_cusparse "$out/$name-T.txt")"
  timeout 60 "$kcla" multiply "$p" --transpose --launch dataflow --repeat 50 --verify --quiet 2>&1 |
    grep -E "^time|verify" | sed 's/ per vector.*//' | tr '\n' ' '
  echo "(transpose dataflow)"
done
if command -v ncu > /dev/null; then
  timeout 120 ncu --clock-control none --kernel-name-base demangled --kernel-name 'regex:Rows|Chunk' \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread \
    --print-units base --csv "$kcla" multiply "$data/HLC.h5" --schedule full_array --launch per_level \
    --repeat 1 --quiet > "$out/ncu_rows.csv" 2> "$out/ncu_rows.err"
  echo "ncu rc=$?"; grep -E "gpu__time|grid_size|registers|warps_active" "$out/ncu_rows.csv" | tail -6 | cut -d, -f5,13- | cut -c1-160
fi
