#!/usr/bin/env bash
# Fetches or generates the data sets of kcla's tests and benchmarks (see docs in
# shared DATA.md) into ${KCLA_DATA_DIR:-~/.cache/kcla/data}; never into the repository.
#
#   scripts/data/fetch.sh [--cache-dir DIR] [set...]
#
# Sets (default: small):
#   small     mouse_hs1940 and HLC (gemma-doc), EUR_subset (bolt-lmm-example):
#             PLINK .bed/.bim/.fam filesets
#   metis     mdual.graph, copter2.graph (libmetis-doc): the non-repetitive controls
#   scrm2504  scrm2504.ms: 5,008 simulated haplotypes x ~101k sites (scrm, ~1 min, 0.5 GB)
#   graphs    pgp-strong-2009.mtx (python3-graph-tool's collection; skipped with a
#             message when graph-tool cannot be installed)
#   all       every set above
#
# Idempotent: a set whose files exist is skipped. Everything is downloaded or generated
# in a temporary folder inside the data folder and moved into place when complete, so an
# interrupted run leaves no half-written data set. Debian packages come through
# `apt-get download` (no root needed). Exit status: 0 when every requested set is present
# or was skipped on purpose, 1 when one could not be fetched (e.g. offline).
set -euo pipefail

data_dir=${KCLA_DATA_DIR:-$HOME/.cache/kcla/data}
sets=()
usage() { sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --cache-dir) data_dir=${2:?--cache-dir needs a folder}; shift 2 ;;
    --cache-dir=*) data_dir=${1#*=}; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "fetch.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) sets+=("$1"); shift ;;
  esac
done
[ ${#sets[@]} -gt 0 ] || sets=(small)

log() { echo "[data] $*"; }
warn() { echo "[data] warning: $*" >&2; }

mkdir -p "$data_dir"
data_dir=$(cd "$data_dir" && pwd)
work=
cleanup() { [ -z "$work" ] || rm -rf "$work"; }
trap cleanup EXIT
new_work() { cleanup; work=$(mktemp -d "$data_dir/.work.XXXXXX"); }

# True when every named file exists in the data folder.
present() {
  local f
  for f in "$@"; do [ -s "$data_dir/$f" ] || return 1; done
}

# Moves the named files from the work folder into the data folder.
install_files() {
  local f
  for f in "$@"; do
    [ -s "$work/$f" ] || { warn "expected $f was not produced"; return 1; }
  done
  for f in "$@"; do mv -f "$work/$f" "$data_dir/$f"; done
}

apt_lists_refreshed=0
# Downloads Debian package $1 into the work folder and unpacks it under $work/root.
fetch_deb() {
  local pkg=$1
  if ! (cd "$work" && apt-get download -qq "$pkg" >/dev/null 2>"$work/apt.log"); then
    # A fresh machine may have no package lists yet; refreshing them needs root.
    if [ $apt_lists_refreshed -eq 0 ] && [ "$(id -u)" -eq 0 ]; then
      apt_lists_refreshed=1
      apt-get update -qq >/dev/null 2>&1 || true
      (cd "$work" && apt-get download -qq "$pkg" >/dev/null 2>"$work/apt.log") || {
        warn "apt-get download $pkg failed: $(grep -v '^W:' "$work/apt.log" | tail -1)"; return 1; }
    else
      warn "apt-get download $pkg failed: $(grep -v '^W:' "$work/apt.log" | tail -1)"
      return 1
    fi
  fi
  mkdir -p "$work/root"
  dpkg-deb -x "$work"/"${pkg}"_*.deb "$work/root"
}

fetch_small() {
  local gemma=(mouse_hs1940.bed mouse_hs1940.bim mouse_hs1940.fam HLC.bed HLC.bim HLC.fam)
  local eur=(EUR_subset.bed EUR_subset.bim EUR_subset.fam)
  if present "${gemma[@]}"; then
    log "small: mouse_hs1940, HLC present"
  else
    log "small: gemma-doc -> mouse_hs1940, HLC"
    new_work
    fetch_deb gemma-doc || return 1
    local f
    for f in "${gemma[@]}"; do
      gunzip -c "$work/root/usr/share/doc/gemma/example/$f.gz" > "$work/$f"
    done
    install_files "${gemma[@]}" || return 1
  fi
  if present "${eur[@]}"; then
    log "small: EUR_subset present"
  else
    log "small: bolt-lmm-example -> EUR_subset"
    new_work
    fetch_deb bolt-lmm-example || return 1
    tar -xJf "$work/root/usr/share/doc/bolt-lmm/examples/examples.tar.xz" -C "$work" "${eur[@]}"
    install_files "${eur[@]}" || return 1
  fi
}

fetch_metis() {
  local graphs=(mdual.graph copter2.graph)
  if present "${graphs[@]}"; then log "metis: present"; return 0; fi
  log "metis: libmetis-doc -> ${graphs[*]}"
  new_work
  fetch_deb libmetis-doc || return 1
  local f
  for f in "${graphs[@]}"; do
    cp "$work/root/usr/share/doc/libmetis-dev/examples/graphs/$f" "$work/$f"
  done
  install_files "${graphs[@]}"
}

fetch_scrm2504() {
  if present scrm2504.ms; then log "scrm2504: present"; return 0; fi
  command -v scrm >/dev/null || { warn "scrm2504: scrm is not installed (Debian package scrm)"; return 1; }
  log "scrm2504: simulating 5,008 haplotypes over 22 Mb (about a minute)"
  new_work
  scrm 5008 1 -t 11000 -r 8800 22000000 -l 100000 -seed 1 2 3 > "$work/scrm2504.ms"
  install_files scrm2504.ms
}

# The Python that imports graph_tool: Debian's package installs it for /usr/bin/python3,
# which another python3 first on PATH (pyenv, a venv) does not see.
graph_tool_python() {
  local py
  for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null && "$py" -c 'import graph_tool' 2>/dev/null; then
      echo "$py"
      return 0
    fi
  done
  return 1
}

fetch_graphs() {
  if present pgp-strong-2009.mtx; then log "graphs: present"; return 0; fi
  local py
  if ! py=$(graph_tool_python); then
    if [ "$(id -u)" -eq 0 ]; then
      log "graphs: installing python3-graph-tool"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        python3-graph-tool >/dev/null 2>&1 || true
    fi
    if ! py=$(graph_tool_python); then
      warn "graphs: python3-graph-tool cannot be installed here (it needs root for" \
           "apt-get install); skipping pgp-strong-2009"
      return 0
    fi
  fi
  log "graphs: pgp-strong-2009 -> Matrix Market"
  new_work
  "$py" - "$work/pgp-strong-2009.mtx" <<'PY'
import sys
import numpy as np
import graph_tool.collection as collection

g = collection.data["pgp-strong-2009"]
edges = g.get_edges()[:, :2].astype(np.int64) + 1
n = g.num_vertices()
if g.is_directed():
    symmetry = "general"
else:  # store each undirected edge once, in the lower triangle
    edges = np.column_stack((edges.max(axis=1), edges.min(axis=1)))
    symmetry = "symmetric"
with open(sys.argv[1], "w") as out:
    out.write(f"%%MatrixMarket matrix coordinate pattern {symmetry}\n")
    out.write("% pgp-strong-2009 from graph-tool's collection (written by kcla's fetch.sh)\n")
    out.write(f"{n} {n} {len(edges)}\n")
    np.savetxt(out, edges, fmt="%d")
PY
  install_files pgp-strong-2009.mtx
}

status=0
for s in "${sets[@]}"; do
  case "$s" in
    small) fetch_small || status=1 ;;
    metis) fetch_metis || status=1 ;;
    scrm2504) fetch_scrm2504 || status=1 ;;
    graphs) fetch_graphs || status=1 ;;
    all) { fetch_small && fetch_metis && fetch_scrm2504 && fetch_graphs; } || status=1 ;;
    *) echo "fetch.sh: unknown set '$s' (small, metis, scrm2504, graphs, all)" >&2; exit 2 ;;
  esac
done
[ $status -eq 0 ] && log "data in $data_dir" || warn "some data sets are missing (see above)"
exit $status
