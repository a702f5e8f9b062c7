#!/usr/bin/env bash
# moves_compare.py: a recording's moves beside a replay's, per allocation, the allocations that part ways
# first; the replay's own --moves output read back; bad input refused.
#   test_moves_compare.sh EMBER_SIM
set -euo pipefail
source "$(dirname "$0")/lib.sh"
sim=$1
tool="$(dirname "$0")/../../tools/bench/moves_compare.py"
scratch dir
# two 8 MiB allocations under a 64 MiB budget: the recording promoted 0 at once and 1 a second later,
# and a failed move (ok 0) that does not count
cat >"$dir/t" <<'T'
ember-trace 2
D 0 67108864 60397977 57042534
A 1000 0 0 8388608 m
A 2000 1 0 8388608 m
L 3000 0 0 2 0:0:8388608:0 1:0:8388608:1
M 4000000 0 0 4 P 1 100
M 1004000000 1 0 4 P 1 100
M 1005000000 1 0 4 D 0 100
E 2000000000
T
"$sim" --trace "$dir/t" --variant static,adaptive --moves "$dir/m" >/dev/null || fail "the replay"
python3 "$tool" "$dir/t" "$dir/m" --variant adaptive >"$dir/out" || fail "moves_compare: $(cat "$dir/out")"
grep -q '^replay: adaptive;' "$dir/out" || fail "the variant line: $(cat "$dir/out")"
# the replay promoted both at the launch: allocation 1 (1 s apart in the recording) comes first, marked
first=$(grep -E '^ +[0-9]+ ' "$dir/out" | head -1)
grep -qE '^ +1 +8\.0 \| +8 / +0 \(1/0\) +1\.000 \| +8 / +0 \(1/0\) +0\.000 \*$' <<<"$first" ||
  fail "allocation 1's row: $(cat "$dir/out")"
grep -qE '^ +0 +8\.0 \| +8 / +0 \(1/0\) +0\.000 \| +8 / +0 \(1/0\) +0\.000$' "$dir/out" ||
  fail "allocation 0's row: $(cat "$dir/out")"
python3 "$tool" "$dir/t" "$dir/m" --variant nosuch 2>"$dir/err" && fail "an absent variant was accepted"
grep -q "no '# nosuch' section" "$dir/err" || fail "absent variant: $(cat "$dir/err")"
python3 "$tool" "$dir/t" "$dir/t" 2>"$dir/err" && fail "a trace as the moves was accepted"
grep -q "not ember-sim --moves output" "$dir/err" || fail "not moves: $(cat "$dir/err")"
echo "moves_compare: ok"
