# Sourced by scripts/fuzz.sh and scripts/sanitize.sh (the clang builds beside the main one):
# clang_kokkos_root prints the Kokkos prefix to configure with — KOKKOS_ROOT, else the one
# build/ uses, else the one scripts/setup.sh --deps-only builds — or fails naming the fix.
# Needs $here (scripts/) and $root (the repository) set, and die() defined.
clang_kokkos_root() {
  command -v clang++ >/dev/null || die "clang++ not found (Debian: clang, libclang-rt-14-dev)"
  local kokkos_root=${KOKKOS_ROOT:-}
  if [ -z "$kokkos_root" ] && [ -f "$root/build/CMakeCache.txt" ]; then
    kokkos_root=$(sed -n 's/^Kokkos_ROOT:[A-Z]*=//p' "$root/build/CMakeCache.txt" | head -1)
  fi
  if [ -z "$kokkos_root" ] || [ ! -d "$kokkos_root" ]; then
    kokkos_root=$(bash "$here/setup.sh" --deps-only --no-apt | tail -1)
  fi
  [ -d "$kokkos_root" ] || die "no Kokkos prefix (set KOKKOS_ROOT)"
  echo "$kokkos_root"
}
