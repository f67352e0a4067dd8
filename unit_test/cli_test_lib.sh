# Shared set-up and helpers of the kcla CLI end-to-end tests, sourced by test_cli_*.sh
# with the script's own arguments (KCLA_BINARY WORK_DIR): sets $kcla and $work, and leaves
# the shell in a fresh, empty $work.
#   fail MESSAGE            print and exit 1
#   run CODE COMMAND...     run COMMAND (stdout to out.txt, stderr to err.txt), check its exit code
#   has FILE PATTERN        FILE contains the extended regular expression
#   below FILE PATTERN LIMIT  the number after "= " on the first line matching PATTERN < LIMIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

kcla=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
cd "$work" || fail "cannot enter $work"
export OMP_PROC_BIND=false

# run CODE COMMAND...: runs COMMAND (stdout in out.txt, stderr in err.txt) and checks its
# exit code.
run() {
  local code=$1
  shift
  "$@" >out.txt 2>err.txt
  local rc=$?
  echo "\$ $* -> $rc"
  if [ "$rc" -ne "$code" ]; then
    cat out.txt err.txt
    fail "'$*' exited with $rc, expected $code"
  fi
}

# has FILE PATTERN: FILE contains the (extended) regular expression.
has() {
  grep -Eq -- "$2" "$1" || {
    cat "$1"
    fail "$1 lacks '$2'"
  }
}

# below FILE PATTERN LIMIT: on the first line of FILE matching PATTERN, the number after
# "= " is below LIMIT.
below() {
  local value
  value=$(grep -E -- "$2" "$1" | head -n 1 | sed -nE 's#.*= *([-+0-9.eE]+).*#\1#p')
  [ -n "$value" ] || fail "no number after '$2' in $1"
  awk -v v="$value" -v l="$3" 'BEGIN { exit !(v < l) }' || fail "$2 $value is not below $3"
}

# same A B [TOL]: the two files hold the same words, every number equal to TOL relative
# (default 1e-12: same grammar, same sums; |x| below 1 compared absolutely).
same() {
  python3 - "$1" "$2" "${3:-1e-12}" <<'PY' || fail "$1 and $2 differ"
import sys
tol = float(sys.argv[3])
a, b = (open(p).read().split() for p in sys.argv[1:3])
assert len(a) == len(b), "different lengths"
for x, y in zip(a, b):
    try:
        fx, fy = float(x), float(y)
    except ValueError:
        assert x == y, (x, y)
        continue
    assert abs(fx - fy) <= tol * max(1.0, abs(fx)), (x, y)
PY
}
