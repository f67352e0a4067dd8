#!/usr/bin/env bash
# Runs clang-tidy (checks: .clang-tidy) over kcla's library and tool sources (core/, io/,
# kernels/, tools/) with the compile commands of a configured build folder; fails on any
# finding. A finding that is not a bug gets a NOLINT comment saying why, at its line.
#
#   scripts/tidy.sh [BUILD_DIR]      default: build (what scripts/setup.sh configures)
#
# Environment: KCLA_TIDY_JOBS (default 2).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-$root/build}
jobs=${KCLA_TIDY_JOBS:-2}
runner=$(command -v run-clang-tidy-14 || command -v run-clang-tidy) ||
  { echo "tidy.sh: run-clang-tidy not found (apt-get install clang-tidy)" >&2; exit 1; }
tidy=$(command -v clang-tidy-14 || command -v clang-tidy)
[ -f "$build_dir/compile_commands.json" ] ||
  { echo "tidy.sh: $build_dir/compile_commands.json is missing (configure with scripts/setup.sh)" >&2; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# g++ is the build's compiler: clang needs the standard spelled out and ignores g++-only
# warning flags.
if ! "$runner" -clang-tidy-binary "$tidy" -p "$build_dir" -quiet -j "$jobs" \
    -extra-arg=-std=c++17 -extra-arg=-Wno-unknown-warning-option \
    "$root/(core|io|kernels|tools)/.*\\.cpp\$" >"$log" 2>&1; then
  sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E "^/.*: (warning|error):" -A3 || tail -30 "$log"
  echo "tidy.sh: clang-tidy found problems (above)" >&2
  exit 1
fi
files=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -c -- " -p=" || true)
echo "clang-tidy: $files files clean"
