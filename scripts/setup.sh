#!/usr/bin/env bash
# kcla set-up: README command 1.
#
# Installs the Debian packages kcla needs, builds Kokkos 3.4.01 + Kokkos Kernels 3.4.01
# from Debian bookworm's trilinos 13.2.0 source package (with kcla's own patches) into a
# cache prefix, then configures and builds kcla. Idempotent: every step that is already
# done is skipped, so re-running it is cheap.
#
#   scripts/setup.sh                      # OpenMP + Serial backends, build/ (default)
#   scripts/setup.sh --backend cuda       # CUDA (sm_90) + Serial, build-cuda/
#   scripts/setup.sh --kokkos-root DIR    # use an existing Kokkos (3.4 or 4.x) install
#
# Options:
#   --backend openmp|cuda   which Kokkos to build and use (default: openmp)
#   --build-dir DIR         kcla build folder (default: build, or build-cuda for cuda)
#   --build-type TYPE       CMAKE_BUILD_TYPE (default: Release)
#   --cache-dir DIR         where Kokkos is built and installed (default: $KCLA_CACHE_DIR
#                           or ~/.cache/kcla)
#   --kokkos-root DIR       skip building Kokkos; use this prefix (Kokkos + Kokkos Kernels)
#   --no-apt                do not install Debian packages
#   --deps-only             stop after the dependencies (no data, no kcla build)
#   --no-data               do not fetch the small test data sets (scripts/data/fetch.sh)
#   --jobs N                parallel build jobs (default: nproc)
#   --cmake-arg ARG         extra argument for kcla's cmake configure (repeatable)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

backend=openmp
build_dir=
build_type=Release
cache_dir=${KCLA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kcla}
kokkos_root=
use_apt=1
deps_only=0
fetch_data=1
jobs=$(nproc 2>/dev/null || echo 2)
extra_cmake_args=()

usage() { sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "setup.sh: error: $*" >&2; exit 1; }
log() { echo "[setup $(date +%H:%M:%S)] $*"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --backend) backend=${2:?}; shift 2 ;;
    --backend=*) backend=${1#*=}; shift ;;
    --build-dir) build_dir=${2:?}; shift 2 ;;
    --build-type) build_type=${2:?}; shift 2 ;;
    --cache-dir) cache_dir=${2:?}; shift 2 ;;
    --kokkos-root) kokkos_root=${2:?}; shift 2 ;;
    --no-apt) use_apt=0; shift ;;
    --deps-only) deps_only=1; shift ;;
    --no-data) fetch_data=0; shift ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    --cmake-arg) extra_cmake_args+=("${2:?}"); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
case "$backend" in
  openmp|cuda) ;;
  *) die "--backend must be 'openmp' or 'cuda', not '$backend'" ;;
esac
[ -n "$build_dir" ] || { [ "$backend" = cuda ] && build_dir=build-cuda || build_dir=build; }
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

# ---------------------------------------------------------------------------------------
# 1. Debian packages
# ---------------------------------------------------------------------------------------
packages=(
  build-essential cmake ninja-build pkg-config git patch xz-utils ca-certificates
  libhdf5-dev hdf5-tools libopenmpi-dev openmpi-bin libhdf5-openmpi-dev
  libopenblas-dev liblapacke-dev libhts-dev libgraphblas-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev
  clang clang-format clang-tidy libclang-rt-14-dev
  python3 python3-numpy python3-matplotlib
  scrm plink2
)
if [ "$use_apt" -eq 1 ]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null
  else
    log "Debian packages: all present"
  fi
fi

# ---------------------------------------------------------------------------------------
# 2. Kokkos 3.4.01 + Kokkos Kernels 3.4.01 from Debian's trilinos source package
# ---------------------------------------------------------------------------------------
trilinos_version=13.2.0
kokkos_config_version=1 # bump when the configure flags below change
patch_dir="$here/patches"

if [ -z "$kokkos_root" ]; then
  # The prefix is keyed by backend, patch content and this script's Kokkos flags, so a
  # changed patch or flag builds a fresh prefix instead of reusing a stale one.
  key=$( { echo "trilinos=$trilinos_version backend=$backend config=$kokkos_config_version";
           cat "$patch_dir"/*.patch; } | sha256sum | cut -c1-12)
  kokkos_root="$cache_dir/kokkos-3.4.01-$backend-$key"
  if [ -f "$kokkos_root/.kcla-complete" ]; then
    log "Kokkos ($backend): cached at $kokkos_root"
  else
    log "Kokkos ($backend): building into $kokkos_root"
    mkdir -p "$cache_dir"
    work=$(mktemp -d "$cache_dir/work.XXXXXX")
    trap 'rm -rf "$work"' EXIT

    # Source: a private APT configuration with one deb-src line; the machine's own
    # sources are never touched.
    src_archive=$(ls "$cache_dir"/src/trilinos_${trilinos_version}.orig.tar.gz 2>/dev/null || true)
    if [ -z "$src_archive" ]; then
      apt_dir="$cache_dir/apt"
      mkdir -p "$apt_dir/lists/partial" "$cache_dir/src"
      echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
        > "$apt_dir/sources.list"
      apt_opts=(-o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
                -o Dir::State::Lists="$apt_dir/lists" -o APT::Sandbox::User=root)
      log "fetching trilinos $trilinos_version source package (private APT config)"
      "${sudo_cmd[@]}" apt-get "${apt_opts[@]}" update -qq
      (cd "$cache_dir/src" && "${sudo_cmd[@]}" apt-get "${apt_opts[@]}" source -d -qq "trilinos=${trilinos_version}-4" \
         || "${sudo_cmd[@]}" apt-get "${apt_opts[@]}" source -d -qq trilinos)
      [ -n "${sudo_cmd[*]}" ] && "${sudo_cmd[@]}" chown -R "$(id -u):$(id -g)" "$cache_dir/src" "$apt_dir"
      src_archive="$cache_dir/src/trilinos_${trilinos_version}.orig.tar.gz"
      [ -f "$src_archive" ] || die "apt-get source did not produce $src_archive"
    fi
    log "extracting packages/kokkos and packages/kokkos-kernels"
    tar -xzf "$src_archive" -C "$work" --strip-components=2 --wildcards \
      '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
    [ -d "$work/kokkos" ] && [ -d "$work/kokkos-kernels" ] || die "kokkos not found in $src_archive"
    for p in "$patch_dir"/*.patch; do
      log "applying $(basename "$p")"
      patch -d "$work" -p1 --quiet --forward < "$p" || die "patch $(basename "$p") failed"
    done

    common=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$kokkos_root.tmp"
            -DCMAKE_CXX_STANDARD=17 -DCMAKE_CXX_EXTENSIONS=OFF -DBUILD_SHARED_LIBS=OFF
            -DCMAKE_POSITION_INDEPENDENT_CODE=ON)
    if [ "$backend" = cuda ]; then
      command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || die "nvcc not found (CUDA toolkit)"
      export PATH="$PATH:/usr/local/cuda/bin"
      kokkos_backend=(-DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=OFF -DKokkos_ENABLE_CUDA=ON
                      -DKokkos_ENABLE_CUDA_LAMBDA=ON
                      -DKokkos_ARCH_HOPPER90=ON -DCMAKE_CXX_COMPILER="$work/kokkos/bin/nvcc_wrapper")
    else
      kokkos_backend=(-DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON -DCMAKE_CXX_COMPILER=g++)
    fi
    rm -rf "$kokkos_root.tmp"
    log "configuring Kokkos"
    cmake -S "$work/kokkos" -B "$work/build-kokkos" "${common[@]}" "${kokkos_backend[@]}" >"$work/kokkos.log" 2>&1 \
      || { tail -40 "$work/kokkos.log"; die "Kokkos configure failed"; }
    log "building Kokkos"
    cmake --build "$work/build-kokkos" -j "$jobs" >>"$work/kokkos.log" 2>&1 \
      && cmake --install "$work/build-kokkos" >>"$work/kokkos.log" 2>&1 \
      || { tail -60 "$work/kokkos.log"; die "Kokkos build failed"; }

    # Kokkos Kernels with explicit instantiation off: the kernels kcla uses are
    # instantiated in kcla's own translation units, which keeps this step to seconds.
    kk_eti_off=()
    for o in INST_DOUBLE INST_FLOAT INST_COMPLEX_DOUBLE INST_COMPLEX_FLOAT INST_ORDINAL_INT \
             INST_ORDINAL_INT64_T INST_OFFSET_INT INST_OFFSET_SIZE_T INST_LAYOUTLEFT \
             INST_LAYOUTRIGHT INST_EXECSPACE_SERIAL INST_EXECSPACE_OPENMP INST_EXECSPACE_CUDA \
             INST_MEMSPACE_HOSTSPACE INST_MEMSPACE_CUDASPACE INST_MEMSPACE_CUDAUVMSPACE; do
      kk_eti_off+=("-DKokkosKernels_$o=OFF")
    done
    kk_tpls=(-DKokkosKernels_ENABLE_TPL_BLAS=ON -DKokkosKernels_ENABLE_TPL_LAPACK=ON
             "-DF77_BLAS_MANGLE=(name,NAME) name ## _")
    if [ "$backend" = cuda ]; then
      # cuBLAS on; cuSPARSE off: with ETI off, Kokkos Kernels 3.4 cannot link its
      # cuSPARSE spmv for <int,int> offsets. kcla calls cuSPARSE itself.
      kk_tpls+=(-DKokkosKernels_ENABLE_TPL_CUBLAS=ON -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF
                -DCMAKE_CXX_COMPILER="$kokkos_root.tmp/bin/nvcc_wrapper")
    else
      kk_tpls+=(-DCMAKE_CXX_COMPILER=g++)
    fi
    log "configuring Kokkos Kernels"
    cmake -S "$work/kokkos-kernels" -B "$work/build-kk" "${common[@]}" -DKokkos_ROOT="$kokkos_root.tmp" \
      -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF \
      "${kk_eti_off[@]}" "${kk_tpls[@]}" >"$work/kk.log" 2>&1 \
      || { tail -40 "$work/kk.log"; die "Kokkos Kernels configure failed"; }
    log "building Kokkos Kernels"
    cmake --build "$work/build-kk" -j "$jobs" >>"$work/kk.log" 2>&1 \
      && cmake --install "$work/build-kk" >>"$work/kk.log" 2>&1 \
      || { tail -60 "$work/kk.log"; die "Kokkos Kernels build failed"; }
    # The installed CMake files name the prefix they were configured with: relocate.
    grep -rl "$kokkos_root.tmp" "$kokkos_root.tmp" 2>/dev/null | while read -r f; do
      file "$f" | grep -q text && sed -i "s|$kokkos_root.tmp|$kokkos_root|g" "$f"
    done
    touch "$kokkos_root.tmp/.kcla-complete"
    rm -rf "$kokkos_root"
    mv "$kokkos_root.tmp" "$kokkos_root"
    rm -rf "$work"
    trap - EXIT
    log "Kokkos ($backend): installed at $kokkos_root"
  fi
fi
[ -d "$kokkos_root" ] || die "Kokkos prefix '$kokkos_root' does not exist"

if [ "$deps_only" -eq 1 ]; then
  echo "$kokkos_root"
  exit 0
fi

# ---------------------------------------------------------------------------------------
# 3. Small real data sets for the tests (outside the repository). Never fatal: offline,
#    the tests that need them skip.
# ---------------------------------------------------------------------------------------
if [ "$fetch_data" -eq 1 ]; then
  log "data sets: scripts/data/fetch.sh small"
  bash "$here/data/fetch.sh" small \
    || log "warning: could not fetch the small data sets (offline?); tests that need them will skip"
fi

# ---------------------------------------------------------------------------------------
# 4. kcla itself
# ---------------------------------------------------------------------------------------
cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE="$build_type" -DKokkos_ROOT="$kokkos_root"
            -DKokkosKernels_ROOT="$kokkos_root" -DKCLA_ENABLE_WERROR=ON)
if [ "$backend" = cuda ]; then
  export PATH="$PATH:/usr/local/cuda/bin"
  wrapper="$kokkos_root/bin/nvcc_wrapper"
  [ -x "$wrapper" ] || die "no nvcc_wrapper in $kokkos_root/bin (is this a CUDA Kokkos?)"
  cmake_args+=(-DCMAKE_CXX_COMPILER="$wrapper")
  # NCCL's header (the library is loaded at run time where it exists): from PyPI's
  # nvidia-nccl-cu13 wheel, kept in the cache. Never fatal: without it NCCL is off.
  nccl_include="$cache_dir/nccl/include"
  if [ ! -f "$nccl_include/nccl.h" ]; then
    log "NCCL header: pip download nvidia-nccl-cu13"
    nccl_tmp=$(mktemp -d)
    if python3 -m pip download --quiet --no-deps nvidia-nccl-cu13 -d "$nccl_tmp" >/dev/null 2>&1 \
      && python3 - "$nccl_tmp" "$nccl_include" <<'PY'
import glob, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "*.whl"))[0]
os.makedirs(sys.argv[2] + ".tmp", exist_ok=True)
with zipfile.ZipFile(wheel) as z:
    with open(os.path.join(sys.argv[2] + ".tmp", "nccl.h"), "wb") as out:
        out.write(z.read("nvidia/nccl/include/nccl.h"))
os.replace(sys.argv[2] + ".tmp", sys.argv[2])
PY
    then log "NCCL header: $nccl_include/nccl.h"
    else log "warning: could not fetch NCCL's header (offline?); NCCL reductions are off"
    fi
    rm -rf "$nccl_tmp"
  fi
  [ -f "$nccl_include/nccl.h" ] && cmake_args+=(-DKCLA_NCCL_INCLUDE_DIR="$nccl_include")
fi
log "configuring kcla in $build_dir"
cmake -S "$root" -B "$build_dir" "${cmake_args[@]}" "${extra_cmake_args[@]}" >/dev/null
log "building kcla"
cmake --build "$build_dir" -j "$jobs"
log "done: kcla ($backend) built in $build_dir"
