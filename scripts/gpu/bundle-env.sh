# Sourced by every *-go.sh inside a bundle made by pack.sh (pack.sh puts it next to run.sh):
# sets `here` to the bundle, unpacks its programs and libraries once, and puts the libraries
# on the loader's path. stage_panels DIR copies the bundle's .h5 panels and HLC's PLINK
# fileset (xz-compressed .bed/.bim) into DIR and points KCLA_DATA_DIR and
# KCLA_TEST_FIXTURE_DIR at the data and the tests' fixtures. time_of FILE prints a --quiet
# --verify `kcla multiply` run's "ms [pred ms] OK|FAIL".
here=$(cd "$(dirname "$0")" && pwd)
[ -d "$here/bin" ] || tar -C "$here" -xJf "$here/payload.tar.xz"
export LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"

stage_panels() {
  local dir=$1
  cp "$here"/data/*.h5 "$here/data/HLC.fam" "$dir/"
  xz -dc "$here/data/HLC.bed.xz" > "$dir/HLC.bed"
  xz -dc "$here/data/HLC.bim.xz" > "$dir/HLC.bim"
  export KCLA_DATA_DIR=$dir KCLA_TEST_FIXTURE_DIR=$here/fixtures
}

time_of() {
  sed -nE 's/^time: ([0-9.]+) ms per product.*/\1/p; s/^model: ([0-9.]+) ms.*/pred \1/p; s/.*relative error vs CSR product.*(OK|FAIL).*/\1/p' "$1" | tr '\n' ' '
}
