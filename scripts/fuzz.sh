#!/usr/bin/env bash
# Builds kcla's libFuzzer targets (unit_test/fuzz, docs/fuzzing.md) with clang in
# build-fuzz/ and runs each for a bounded time. Fails when a target finds a crash, a
# sanitizer report, an escaped exception or an invalid result (libFuzzer saves the input
# under build-fuzz/artifacts/TARGET/); prints executions and time per target.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET]      default 30
#
# Environment:
#   KCLA_FUZZ_TARGETS     targets to run, e.g. "matrix_market ms" (default: all built)
#   KCLA_FUZZ_BUILD_DIR   build folder (default: build-fuzz)
#   KCLA_FUZZ_JOBS        parallel build jobs (default: 1)
#   KOKKOS_ROOT           Kokkos prefix for the configure step (default: the one build/ uses,
#                         else scripts/setup.sh --deps-only); the targets do not link Kokkos
# The corpus each target grows is kept in build-fuzz/corpus/TARGET/ for the next run.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
seconds=${1:-30}
case "$seconds" in '' | *[!0-9]*) echo "fuzz.sh: SECONDS_PER_TARGET must be a whole number" >&2; exit 2 ;; esac
build_dir=${KCLA_FUZZ_BUILD_DIR:-$root/build-fuzz}
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac
jobs=${KCLA_FUZZ_JOBS:-1}
log() { echo "[fuzz $(date +%H:%M:%S)] $*"; }
die() { echo "fuzz.sh: error: $*" >&2; exit 1; }

# shellcheck source=clang_build_lib.sh
source "$here/clang_build_lib.sh"
# Kokkos is needed only because kcla's top-level CMakeLists finds it.
kokkos_root=$(clang_kokkos_root)

start=$SECONDS
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  log "configuring $build_dir (clang, Kokkos at $kokkos_root)"
  mkdir -p "$build_dir"
  cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
    -DKokkos_ROOT="$kokkos_root" -DKokkosKernels_ROOT="$kokkos_root" \
    -DKCLA_ENABLE_FUZZING=ON -DKCLA_ENABLE_WERROR=ON -DKCLA_ENABLE_TESTS=OFF \
    -DKCLA_ENABLE_BENCHMARKS=OFF -DKCLA_ENABLE_EXAMPLES=OFF -DKCLA_ENABLE_TOOLS=OFF \
    -DKCLA_ENABLE_MPI=OFF -DKCLA_ENABLE_HTSLIB=OFF -DKCLA_ENABLE_GRAPHBLAS=OFF \
    >"$build_dir/configure.log" 2>&1 || { tail -30 "$build_dir/configure.log"; die "configure failed"; }
fi
log "building the fuzz targets (-j$jobs)"
cmake --build "$build_dir" --target kcla_fuzz -j "$jobs"
log "build took $((SECONDS - start)) s"

fuzz_dir=$build_dir/unit_test/fuzz
read -r -a built < <(tr ';' ' ' <"$fuzz_dir/targets.txt")
read -r -a targets <<<"${KCLA_FUZZ_TARGETS:-${built[*]}}"

# Findings must stop the run: UB aborts (the targets are built with
# -fno-sanitize-recover), and ASan reports leaks too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# The targets' scratch files (and fork mode's) go under the build folder: a crashing
# input leaves its scratch folder behind.
export TMPDIR=$build_dir/tmp
mkdir -p "$TMPDIR"

failed=()
summary=()
for t in "${targets[@]}"; do
  exe=$fuzz_dir/kcla_fuzz_$t
  [ -x "$exe" ] || die "no fuzz target '$t' (built: ${built[*]})"
  corpus=$build_dir/corpus/$t
  artifacts=$build_dir/artifacts/$t
  mkdir -p "$corpus" "$artifacts"
  seeds=()
  for d in "$root/unit_test/fuzz/corpus/$t" "$fuzz_dir/seeds/$t"; do
    [ -d "$d" ] && seeds+=("$d")
  done
  extra=()
  [ -f "$root/unit_test/fuzz/$t.dict" ] && extra+=(-dict="$root/unit_test/fuzz/$t.dict")
  # Reports from inside a library (Debian's libhdf5 on corrupt metadata) are suppressed
  # by unit_test/fuzz/TARGET.{asan,lsan}.supp; see docs/fuzzing.md.
  asan=$ASAN_OPTIONS lsan=${LSAN_OPTIONS:-}
  supp=$root/unit_test/fuzz/$t
  [ -f "$supp.asan.supp" ] && asan+=:suppressions=$supp.asan.supp
  [ -f "$supp.lsan.supp" ] && lsan+=:suppressions=$supp.lsan.supp
  upstream=
  if [ "$t" = hdf5_grammar ]; then
    # libhdf5 1.10.8 also crashes outright on some corrupt files (docs/fuzzing.md), which
    # no suppression can stop. Fuzz in fork mode, which goes on after a crash, and judge
    # each saved input below by where it crashes. libhdf5 also mallocs sizes read from
    # corrupt metadata (378 GB, say) and copes with NULL: let such mallocs fail as they do
    # outside ASan (kcla's own allocations use operator new, which ASan still reports).
    upstream=libhdf5
    asan+=:allocator_may_return_null=1:max_allocation_size_mb=2048
    extra+=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1)
  fi
  # Inputs saved by earlier runs move aside, so what is left afterwards is this run's.
  mkdir -p "$artifacts/earlier"
  find "$artifacts" -maxdepth 1 -type f ! -name log.txt -exec mv -t "$artifacts/earlier" {} +
  log "fuzzing $t for $seconds s"
  t0=$SECONDS
  rc=0
  (cd "$artifacts" && ASAN_OPTIONS=$asan LSAN_OPTIONS=$lsan "$exe" -max_total_time="$seconds" \
     -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/" \
     "${extra[@]}" "$corpus" "${seeds[@]}") >"$artifacts/log.txt" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$artifacts/log.txt" | tail -1)
  # Fork mode prints "#RUNS: cov: ..." lines instead of final stats.
  [ -n "$runs" ] || runs=$(sed -n 's/^#\([0-9]*\): cov:.*/\1/p' "$artifacts/log.txt" | tail -1)
  status=ok
  [ "$rc" -eq 0 ] || status="FAILED (exit $rc)"
  if [ -n "$upstream" ]; then
    # Replay each saved input alone: a report (crash, out-of-memory) whose first frame past
    # the allocator is in $upstream is that library's bug (listed, not failing); one that
    # does not come back is put down to the
    # uninstrumented library's state (kcla's own code is instrumented, so its errors show
    # wherever they happen); anything else is a finding.
    n_upstream=0 n_gone=0
    for input in "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/oom-* "$artifacts"/timeout-*; do
      [ -f "$input" ] || continue
      replay=$(cd "$artifacts" && ASAN_OPTIONS=$asan LSAN_OPTIONS=$lsan "$exe" -timeout=20 \
                 -rss_limit_mb=2048 "$input" 2>&1) && { n_gone=$((n_gone + 1)); continue; }
      # The first frame of the first stack that is not an allocator or memory interceptor.
      first_frame=$(grep -E '^ *#[0-9]+ ' <<<"$replay" |
        grep -m1 -vE ' in (malloc|calloc|realloc|free|operator new|operator delete|mem(cpy|move|set)|__(mem|str)[a-z_0-9]*|__interceptor_[a-z_]+|__asan_[a-z_0-9]+) ' || true)
      if grep -q "$upstream" <<<"$first_frame" && ! grep -q "kcla fuzz finding" <<<"$replay"; then
        n_upstream=$((n_upstream + 1))
        echo "$input: $first_frame" >>"$artifacts/upstream.txt"
      else
        status="FAILED (kcla finding: $(basename "$input"))"
        printf '%s\n' "$replay" >"$input.txt"
      fi
    done
    [ "$status" = ok ] && [ $((n_upstream + n_gone)) -gt 0 ] &&
      status="ok ($n_upstream inputs crash inside $upstream, $n_gone did not crash again: $artifacts)"
  fi
  corpus_files=$(find "$corpus" -type f | wc -l)
  summary+=("$(printf '%-14s %5d s %12s runs %8s corpus files  %s' "$t" $((SECONDS - t0)) \
    "${runs:-?}" "$corpus_files" "$status")")
  if [ "$status" != "${status#FAILED}" ]; then
    failed+=("$t")
    echo "---- $t: last lines of $artifacts/log.txt"
    tail -40 "$artifacts/log.txt"
  fi
done

echo "::: fuzzing summary ($seconds s per target; build folder $build_dir)"
for line in "${summary[@]}"; do echo ":::   $line"; done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: findings in: ${failed[*]} (inputs saved under $build_dir/artifacts/)" >&2
  exit 1
fi
