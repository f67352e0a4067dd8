#!/usr/bin/env bash
# Docs that cannot drift: every command line of README.md's tour and Examples code blocks
# names a command that exists and only options that command documents in its --help.
# (Running them all would need the tour's data sets; the options are what drifts.)
#
#   test_readme_commands.sh KCLA_BINARY EXAMPLES_BUILD_DIR README WORK_DIR
set -u
readme=$(realpath "$3")
examples=$(realpath "$2")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=cli_test_lib.sh
source "$here/cli_test_lib.sh" "$1" "$4"  # sets $kcla, $work; cd "$work"

# The command lines of the code blocks after "### The command line" and "## Examples",
# continuation lines joined, comments dropped.
python3 - "$readme" > commands.txt <<'PY' || fail "cannot read $readme"
import re, sys
text = open(sys.argv[1]).read()
out = []
for heading in ("### The command line", "## Examples"):
    at = text.index(heading)
    start = text.index("```", at)
    end = text.index("```", start + 3)
    block = text[start + 3:end].split("\n")[1:]
    joined, line = [], ""
    for raw in block:
        raw = raw.split("  #")[0].rstrip()
        if raw.endswith("\\"):
            line += raw[:-1] + " "
            continue
        line += raw
        if line.strip():
            joined.append(" ".join(line.split()))
        line = ""
    out += joined
print("\n".join(out))
PY
[ -s commands.txt ] || fail "README.md has no command lines where expected"
checked=0
while read -r line; do
  read -ra words <<< "$line"
  # Skip a launcher (mpirun -np N) in front of the program.
  while [ "${#words[@]}" -gt 0 ] && [[ "${words[0]}" == mpirun || "${words[0]}" == -np ||
         "${words[0]}" =~ ^[0-9]+$ ]]; do words=("${words[@]:1}"); done
  program=${words[0]}
  help_cmd=()
  if [ "$program" = kcla ]; then
    sub=${words[1]}
    if [ "$sub" = tlr ]; then help_cmd=("$kcla" tlr "${words[2]}" --help)
    else help_cmd=("$kcla" "$sub" --help); fi
  elif [[ "$program" == build/examples/* ]]; then
    exe=$examples/${program#build/examples/}
    [ -x "$exe" ] || fail "README names $program, which the build does not make"
    help_cmd=("$exe" --help)
  else
    fail "README command '$line' starts with an unknown program '$program'"
  fi
  "${help_cmd[@]}" > help.txt 2>&1 || fail "'${help_cmd[*]}' failed: README's '$line'"
  for w in "${words[@]}"; do
    [[ "$w" == --* ]] || continue
    option=${w%%=*}
    grep -qE -- "${option}([^a-z-]|$)" help.txt ||
      fail "README's '$line' uses $option, which '${help_cmd[*]}' does not document"
  done
  checked=$((checked + 1))
done < commands.txt
[ "$checked" -ge 20 ] || fail "only $checked README commands found"
echo "checked $checked README command lines"
echo "PASS"
