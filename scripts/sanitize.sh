#!/usr/bin/env bash
# Builds kcla's unit tests and tool with clang, AddressSanitizer and UndefinedBehaviorSanitizer
# in build-sanitize/ and runs the test suite there (host back end, OpenMP). Fails on any
# test failure, sanitizer report (undefined behaviour aborts: -fno-sanitize-recover) or
# leak outside the suppressions in scripts/lsan-suppressions.txt.
#
#   scripts/sanitize.sh [CTEST_ARGS...]     e.g. -R Packed
#
# Environment:
#   KCLA_SANITIZE_BUILD_DIR   build folder (default: build-sanitize)
#   KCLA_SANITIZE_JOBS        parallel build and test jobs (default: 2)
#   KOKKOS_ROOT               Kokkos prefix (default: the one build/ uses, else
#                             scripts/setup.sh --deps-only)
# MPI and GraphBLAS are left out (their libraries are not built with the sanitizers);
# benchmarks and examples too (timings and demos, covered by the main build). Large
# allocations return null instead of aborting (allocator_may_return_null), so kcla's own
# bad_alloc handling is what the hostile-input tests see.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
build_dir=${KCLA_SANITIZE_BUILD_DIR:-$root/build-sanitize}
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac
jobs=${KCLA_SANITIZE_JOBS:-2}
log() { echo "[sanitize $(date +%H:%M:%S)] $*"; }
die() { echo "sanitize.sh: error: $*" >&2; exit 1; }

# shellcheck source=clang_build_lib.sh
source "$here/clang_build_lib.sh"
kokkos_root=$(clang_kokkos_root)

flags="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
start=$SECONDS
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  log "configuring $build_dir (clang, ASan + UBSan, Kokkos at $kokkos_root)"
  mkdir -p "$build_dir"
  cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DKokkos_ROOT="$kokkos_root" -DKokkosKernels_ROOT="$kokkos_root" \
    -DKCLA_ENABLE_WERROR=ON -DKCLA_ENABLE_BENCHMARKS=OFF -DKCLA_ENABLE_EXAMPLES=OFF \
    -DKCLA_ENABLE_MPI=OFF -DKCLA_ENABLE_GRAPHBLAS=OFF \
    >"$build_dir/configure.log" 2>&1 || { tail -30 "$build_dir/configure.log"; die "configure failed"; }
fi
log "building (-j$jobs)"
cmake --build "$build_dir" -j "$jobs"
log "build took $((SECONDS - start)) s"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:symbolize=1:check_initialization_order=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$here/lsan-suppressions.txt:print_suppressions=0}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=${OMP_PROC_BIND:-false}
start=$SECONDS
# kcla.install_and_consume builds a plain consumer against the installed (sanitized)
# library, which cannot link without the sanitizer runtimes; the main build runs it, and
# kcla.headers.self_contained (a compile check, nothing to sanitize).
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" -E '^kcla\.(install_and_consume|headers\.self_contained)$' "$@"
log "tests took $((SECONDS - start)) s"
