#!/usr/bin/env bash
# Packs the CUDA build's test and benchmark programs (plus the shared libraries the GPU
# machine lacks, and optional data files) into one folder of at most 64 MiB, with
# run.sh to execute them there.
#
#   scripts/gpu/pack.sh [--build-dir build-cuda] [--out gpu-bundle] [--data FILE]...
#                       [--only PROGRAM]...   (default: every test and benchmark + kcla)
#
# Programs that link SuiteSparse:GraphBLAS (kcla_test_grammar_graphblas) travel only when
# --only names them: libgraphblas alone is 179 MB, 23 MiB packed.
#
# On the GPU machine: bash gpu-bundle/run.sh OUTDIR [test|bench|all] [extra filters]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=$root/build-cuda
out=$root/gpu-bundle
data=()
only=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$(cd "$2" && pwd); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --data) data+=("$2"); shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "pack.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -f "$build_dir/CMakeCache.txt" ] || { echo "pack.sh: $build_dir is not a build folder (run scripts/setup.sh --backend cuda)" >&2; exit 1; }
grep -q "KCLA_HAVE_CUDA:INTERNAL=ON\|nvcc_wrapper" "$build_dir/CMakeCache.txt" || { echo "pack.sh: $build_dir is not a CUDA build" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/data"
shopt -s nullglob
programs=("$build_dir"/unit_test/kcla_test_* "$build_dir"/perf_test/kcla_bench_* "$build_dir"/tools/kcla)
if [ ${#only[@]} -gt 0 ]; then
  selected=()
  for p in "${programs[@]}"; do
    for o in "${only[@]}"; do [ "$(basename "$p")" = "$o" ] && selected+=("$p"); done
  done
  programs=("${selected[@]}")
fi
for p in "${programs[@]}"; do
  [ -x "$p" ] && [ -f "$p" ] || continue
  case "$p" in *.cmake) continue ;; esac
  if [ ${#only[@]} -eq 0 ] && ldd "$p" 2>/dev/null | grep -q libgraphblas; then
    echo "pack.sh: leaving out $(basename "$p") (links libgraphblas; name it with --only)"
    continue
  fi
  cp "$p" "$out/bin/"
  strip --strip-debug "$out/bin/$(basename "$p")" 2>/dev/null || true
done

# Shared libraries: everything outside glibc/libstdc++/the CUDA toolkit (which the GPU
# machine has) travels with the programs.
for p in "$out"/bin/*; do
  ldd "$p" | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
    libcuda.so*|libcudart.so*|libcublas*.so*|libcusparse.so*|libnvJitLink.so*|libcusolver.so*|libcurand.so*) ;;
    *) cp -L "$lib" "$out/lib/" ;;
  esac
done
for d in "${data[@]}"; do cp -L "$d" "$out/data/"; done
# The tests' committed fixtures (unit_test/data); run.sh points KCLA_TEST_FIXTURE_DIR at them.
cp -r "$root/unit_test/data" "$out/fixtures"
# Programs and libraries travel xz-compressed (OpenBLAS alone is 35 MiB unpacked);
# run.sh unpacks them on the GPU machine.
tar -C "$out" -cf - bin lib | xz -T0 -6 > "$out/payload.tar.xz"
rm -rf "$out/bin" "$out/lib"
cp "$here/run.sh" "$out/run.sh"
cp "$here/bundle-env.sh" "$out/bundle-env.sh"  # what every *-go.sh sources
size=$(du -sm "$out" | cut -f1)
echo "pack.sh: $out holds $(tar -tJf "$out/payload.tar.xz" | grep -c '^bin/.') programs, $(tar -tJf "$out/payload.tar.xz" | grep -c '^lib/.') libraries, $(ls "$out/data" | wc -l) data files: ${size} MiB"
if [ "$size" -gt 63 ]; then
  echo "pack.sh: bundle is over the 64 MiB the GPU machine accepts" >&2
  exit 1
fi
