# Shared set-up of the *_vs_plink2.sh comparisons, sourced after their argument parsing.
#   enter_work_dir FILESET   makes $kcla absolute, sets $base (the absolute PLINK base name,
#                            without .bed) and enters $work (a temporary folder, removed at
#                            exit, when $work is empty)
enter_work_dir() {
  kcla=$(realpath "$kcla")
  base=$(realpath "${1%.bed}.bed")
  base=${base%.bed}
  if [ -z "$work" ]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
  fi
  mkdir -p "$work"
  cd "$work" || exit 1
}
