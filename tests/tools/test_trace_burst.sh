#!/usr/bin/env bash
# trace_burst.py: one run's launches moved into a burst, the waits between them dropped, the rest kept;
# bad runs refused; the result replays in ember-sim, async.
#   test_trace_burst.sh EMBER_SIM
set -euo pipefail
source "$(dirname "$0")/lib.sh"
sim=$1
burst="$(dirname "$0")/../../tools/bench/trace_burst.py"
scratch dir
cat >"$dir/t" <<'T'
ember-trace 2
D 0 1073741824 966367641 912680550
A 1000 0 0 4194304 m
X 2000000
L 3000000 0 0 1 0:0:4194304:0
W 3100000 40000000
L 41000000 0 0 1 0:0:4194304:0
W 41100000 80000000
L 81000000 0 0 1 0:0:4194304:0
W 81100000 120000000
X 121000000
L 122000000 0 0 1 0:0:4194304:0
W 122100000 160000000
F 170000000 0
E 171000000
T
python3 "$burst" "$dir/t" "$dir/b" --apart-us 500 | grep 'run 1: 3 launches within 1.0 ms' >/dev/null || fail "the summary line"
grep '^L' "$dir/b" | awk '{print $2}' | tr '\n' ' ' | grep -x '3000000 3500000 4000000 122000000 ' >/dev/null ||
  fail "launch times: $(grep '^L' "$dir/b")"
[ "$(grep -c '^W' "$dir/b")" = 2 ] || fail "waits: $(grep '^W' "$dir/b")"
grep -q '^W 81100000 120000000$' "$dir/b" || fail "the run's last wait, after its last launch, stays"
diff <(grep -v '^[LW]' "$dir/t") <(grep -v '^[LW]' "$dir/b") || fail "other lines changed"
python3 "$burst" "$dir/t" "$dir/b2" --run 2 >/dev/null && grep -q '^L 122000000 ' "$dir/b2" || fail "--run 2"
python3 "$burst" "$dir/t" "$dir/b3" --run 3 2>"$dir/err" && fail "--run 3 accepted"
grep -q 'has 2 X lines, no run 3' "$dir/err" || fail "--run 3: $(cat "$dir/err")"
"$sim" --trace "$dir/b" --launches async --variant adaptive --json >/dev/null 2>&1 || fail "ember-sim did not replay it"
echo "trace_burst: ok"
