#!/usr/bin/env bash
# Fails when a C++ source of kcla is not clang-formatted (config: .clang-format).
#   scripts/check-format.sh        check
#   scripts/check-format.sh --fix  reformat in place
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fmt=$(command -v clang-format-14 || command -v clang-format) || { echo "clang-format not found" >&2; exit 1; }
# Pinned (also in .pre-commit-config.yaml): other major versions format some constructs
# differently.
pinned=14
major=$("$fmt" --version | sed -nE 's/.*version ([0-9]+)\..*/\1/p')
[ "$major" = "$pinned" ] || { echo "check-format.sh: clang-format $pinned needed, $fmt is version ${major:-unknown}" >&2; exit 1; }
# Untracked (not ignored) sources too, so --fix formats new files before their first commit.
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.hpp' '*.cpp' '*.h' '*.cu' 2>/dev/null || find core kernels io tools perf_test unit_test examples -name '*.[hc]pp')
if [ "${1:-}" = --fix ]; then
  "$fmt" -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  "$fmt" --dry-run -Werror "$f" >/dev/null 2>&1 || { echo "not formatted: $f"; bad=1; }
done
[ $bad -eq 0 ] && echo "clang-format: ${#files[@]} files clean"
exit $bad
