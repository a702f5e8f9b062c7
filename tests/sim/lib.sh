# Shared by the ember-sim shell tests: run the binary, read JSON fields.
SIM=${1:?usage: test_x.sh path/to/ember-sim}
fail() { echo "FAIL: $*" >&2; exit 1; }
# field LINE NAME: a number from one JSON line
field() { printf '%s\n' "$1" | grep -o "\"$2\":[-0-9.e+]*" | head -1 | cut -d: -f2; }
# one JSON line: run WORKLOAD WS VARIANT [more options]
run() { local w=$1 ws=$2 v=$3; shift 3; "$SIM" --workload "$w" --working-set "$ws" --budget 16G --variant "$v" --seed 7 --json "$@"; }
# awk arithmetic: calc 'a/b' 
calc() { awk "BEGIN { printf \"%.6g\", $1 }"; }
check() { [ "$(awk "BEGIN { print ($1) ? 1 : 0 }")" = 1 ] || fail "$2 ($1)"; echo "ok: $2 ($1)"; }
