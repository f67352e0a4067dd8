#!/usr/bin/env bash
# Every CUDA test program of a bundle made by pack.sh, then the MPI transports on the GPU
# machine (copy into the bundle as suite.sh):
#   bash BUNDLE/suite.sh OUT
# 1. kcla_test_mpi under mpirun -np 2 (two ranks on one GPU: NCCL refuses that, so the
#    automatic choice must fall back and a forced NCCL must say why);
# 2. the kcla tool on a generated block panel: one process, and mpirun -np 1 / -np 2 with
#    each --mpi-transport, --verify, the reduction named;
# 3. every kcla_test_* (one process; kcla_test_mpi with KCLA_TEST_EXPECT_NCCL=1: NCCL must
#    be chosen when the machine has libnccl), with the bundle's panels staged.
# libnccl: KCLA_NCCL_LIBRARY if set, else the one PyTorch's wheel brings on that machine.
set -u
. "$(cd "$(dirname "$0")" && pwd)/bundle-env.sh"  # here, programs, libraries
out=$1
mkdir -p "$out"
data=$(mktemp -d)  # staged panels and generated files stay on the machine
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines
if [ -z "${KCLA_NCCL_LIBRARY:-}" ]; then
  KCLA_NCCL_LIBRARY=$(ls /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2 \
    2>/dev/null | head -1)
  [ -n "$KCLA_NCCL_LIBRARY" ] || KCLA_NCCL_LIBRARY=$(python3 -c \
    'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' \
    2>/dev/null)
  export KCLA_NCCL_LIBRARY
fi
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "mpirun: $(command -v mpirun || echo none); libnccl: ${KCLA_NCCL_LIBRARY:-none}"
} | tee "$out/machine.txt"
stage_panels "$data" 2>/dev/null || true
limit=${KCLA_GPU_TIMEOUT:-240}
mpi=(mpirun --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH -x KCLA_NCCL_LIBRARY
     -x NCCL_NVLS_ENABLE -x KCLA_DATA_DIR -x KCLA_TEST_FIXTURE_DIR)
if command -v mpirun > /dev/null && [ -x "$here/bin/kcla_test_mpi" ]; then
  timeout 200 "${mpi[@]}" -np 2 "$here/bin/kcla_test_mpi" > "$out/test_mpi_np2.log" 2>&1
  echo "mpirun -np 2 kcla_test_mpi rc=$? $(grep -c '^\[       OK \]' "$out/test_mpi_np2.log") passed"
  grep -E "^\[  FAILED|Failure|\[ note \]" "$out/test_mpi_np2.log" | head -10
fi
kcla=$here/bin/kcla
if [ -x "$kcla" ]; then
  cd "$data" || exit 1
  timeout 120 "$kcla" generate --samples 4000 --variants 40000 --sfs-exponent 0.75 --threads 16 \
    -o panel --quiet &&
    timeout 200 "$kcla" compress panel -o panel.h5 --block-cols 4096 --threads 16 --quiet | tail -1
  "$kcla" multiply panel.h5 --backend cuda --batch 16 --verify --repeat 20 | grep -E "time|OK|FAIL"
  for np in 1 2; do
    for t in auto nccl host; do
      echo "--- mpirun -np $np --mpi-transport $t"
      timeout 120 "${mpi[@]}" -np $np "$kcla" multiply panel.h5 --backend cuda --batch 16 \
        --verify --repeat 20 --mpi-transport $t 2>&1 | grep -E "time|OK|FAIL|error" | head -4
    done
  done
fi
seen=
if [ "${TESTS:-1}" != 0 ]; then
  # The programs this tree changed last run first: a run cut short still reports them.
  for t in "$here"/bin/kcla_test_mpi "$here"/bin/kcla_test_grammar_multiply "$here"/bin/kcla_test_*; do
    [ -x "$t" ] || continue
    case " $seen " in *" $t "*) continue ;; esac
    seen="$seen $t"
    name=$(basename "$t")
    KCLA_TEST_EXPECT_NCCL=$([ "$name" = kcla_test_mpi ] && [ -n "$KCLA_NCCL_LIBRARY" ] && echo 1) \
      timeout "$limit" "$t" > "$out/$name.log" 2>&1
    echo "$name rc=$? $(grep -c '^\[       OK \]' "$out/$name.log") passed"
    grep -E "^\[  FAILED|Failure|\[ note \]" "$out/$name.log" | head -10
  done
fi
