#!/usr/bin/env bash
# The 2-bit packed products and the cuSPARSE cross-check on the GPU machine (issue "honest
# baselines"). Copy into a bundle made by
#   pack.sh --only kcla_bench_baselines --only kcla_bench_cusparse_check
#           --only kcla_test_packed --only kcla_test_foundation --only kcla
#           --data scrm2504.h5 --data EUR_subset.h5 --data mouse_hs1940.h5
#           --data HLC.bed.xz --data HLC.bim.xz --data HLC.fam
# as go.sh (HLC travels as its PLINK fileset, xz-compressed: its grammar file is 47 MB),
#   bash BUNDLE/go.sh OUT [BATCH]
# 1. kcla_test_packed (every kernel against CSR, HLC's .bed included) and
#    kcla_test_foundation (the baseline suite's products);
# 2. HLC compressed to a grammar with kcla compress;
# 3. kcla_bench_cusparse_check: cuSPARSE SpMV from plain CUDA calls on every panel;
# 4. kcla_bench_baselines --batch BATCH (default 1) on every panel, energy included;
# 5. with SWEEP=1: the 2-bit table kernels over their tuning grids on scrm2504 and HLC;
# 6. with NCU=1 (and ONLY=1: nothing else): Nsight Compute on the 2-bit kernels named in
#    NCU_KERNELS (default: tensor-core, quad- and pair-table functors) on scrm2504 and HLC
#    (speed of light, occupancy, warp stalls, bank conflicts).
# BASELINES=LIST passes --only LIST to step 4 (e.g. BASELINES=2-bit); CHECK=0 skips step 3;
# TESTS=LIST names the test programs of step 1 (run even with ONLY=1); SWEEP_PANELS=LIST
# the panels of step 5 (default: scrm2504 HLC).
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"  # here, programs, libraries
out=$1
batch=${2:-1}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
data=$(mktemp -d)
stage_panels "$data"
if [ "${ONLY:-0}" != 1 ] || [ -n "${TESTS:-}" ]; then
echo "== tests"
for t in ${TESTS:-kcla_test_packed kcla_test_foundation}; do
  timeout 200 "$here/bin/$t" > "$out/$t.log" 2>&1
  echo "$t rc=$? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/$t.log" | tr '\n' ' ')"
  grep -E "^\[  FAILED  \]" "$out/$t.log" | head -5
done
fi
echo "== HLC grammar"
/usr/bin/time -f "%e s, %M KB" "$here/bin/kcla" compress "$data/HLC" -o "$data/HLC.h5" --quiet 2>&1 | tail -3
panels=()  # the panels this bundle carries (a bundle near the carry limit may leave some out)
for p in scrm2504 HLC EUR_subset mouse_hs1940; do
  [ -f "$data/$p.h5" ] && panels+=("$data/$p.h5")
done
if [ "${ONLY:-0}" != 1 ]; then
if [ "${CHECK:-1}" = 1 ]; then
echo "== cuSPARSE cross-check"
timeout 200 "$here/bin/kcla_bench_cusparse_check" --repeat 50 "${panels[@]}" 2>&1 | tee "$out/cusparse_check.log"
fi
echo "== baselines, batch $batch"
timeout 300 "$here/bin/kcla_bench_baselines" --batch "$batch" --repeat 50 --energy-seconds 0.5 \
   --tsv "$out/baselines.tsv" ${BASELINES:+--only "$BASELINES"} "${panels[@]}" 2>&1 | tee "$out/baselines.log"
echo "kcla_bench_baselines rc=${PIPESTATUS[0]}"
fi
if [ "${SWEEP:-0}" = 1 ]; then
  echo "== 2-bit tuning grids"
  timeout 200 "$here/bin/kcla_bench_baselines" --batch 1 --repeat 5 --energy-seconds 0 \
    --only 2-bit --packed-sweep $(for p in ${SWEEP_PANELS:-scrm2504 HLC}; do echo "$data/$p.h5"; done) \
    2>&1 | tee "$out/packed_sweep.log"
fi
if [ "${NCU:-0}" = 1 ]; then
  echo "== Nsight Compute"
  ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  for kernel in ${NCU_KERNELS:-PackedTensorCoreFunctor PackedQuadTablesFunctor PackedTablesFunctor}; do
    for panel in scrm2504 HLC; do
      echo "-- $kernel on $panel"
      timeout 150 "$ncu" --kernel-name-base demangled --kernel-name "regex:$kernel" \
        --launch-skip 3 --launch-count 1 --section SpeedOfLight --section Occupancy \
        --section WarpStateStats --section LaunchStats \
        --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed.sum,dram__bytes_read.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio \
        "$here/bin/kcla_bench_baselines" --batch 1 --repeat 3 --energy-seconds 0 --only 2-bit \
        "$data/$panel.h5" > "$out/ncu_${kernel}_$panel.log" 2>&1
      grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Size|Grid Size|bank_conflicts|wavefronts|inst_executed|dram__bytes|Stall|stalled|Waves|Warp Cycles Per Issued" "$out/ncu_${kernel}_$panel.log" | head -40
    done
  done
fi
