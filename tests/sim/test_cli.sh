#!/bin/bash
# The command line: bad input gets exit 2 and one line naming the problem;
# good input gets the documented output.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# bad ARGS... : exit 2, exactly one stderr line mentioning PATTERN ($BADPAT)
bad() {
	"$SIM" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ $rc -eq 2 ] || fail "'$*' exited $rc, expected 2"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "'$*' wrote $(wc -l <"$tmp/err") stderr lines: $(cat "$tmp/err")"
	grep -q -- "$BADPAT" "$tmp/err" || fail "'$*': message lacks '$BADPAT': $(cat "$tmp/err")"
	echo "ok: $* -> $(cat "$tmp/err")"
}
BADPAT=--working-set bad --working-set 12Q
BADPAT=--working-set bad --working-set ""
BADPAT=--working-set bad --working-set -5G
BADPAT=--budget bad --budget 1.5X
BADPAT=--budget bad --budget 1K
BADPAT="unknown variant" bad --variant nope
BADPAT="unknown workload" bad --workload nope
BADPAT=--seed bad --seed abc
BADPAT=--passes bad --passes 0
BADPAT=--drift bad --drift 200
BADPAT=--param bad --param novalue
BADPAT="unknown option" bad --frobnicate
BADPAT="unexpected argument" bad extra
BADPAT="needs a value" bad --budget
BADPAT=--trace bad --trace "$tmp/missing"
printf 'not-a-trace 3\n' >"$tmp/t"; BADPAT="unknown trace header" bad --trace "$tmp/t"
BADPAT="--kernel-reads needs --trace" bad --kernel-reads nw
printf 'ember-trace 2\nA 1 0 0 1073741824 m\nL 2 0 0 1 0:0:1073741824:0\nE 3\n' >"$tmp/t"
BADPAT="--kernel-reads nope: unknown workload" bad --trace "$tmp/t" --kernel-reads nope
BADPAT="the model has .* launches, the trace 1" bad --trace "$tmp/t" --kernel-reads nw
BADPAT="--kernel-reads star: no launch reads a table beside columns 64 times its size$" bad --trace "$tmp/t" --kernel-reads star
BADPAT="--kernel-reads moe: no launch gathers experts" bad --trace "$tmp/t" --kernel-reads moe
BADPAT="--kernel-reads pathfinder: no launch reads a grid beside two rows" bad --trace "$tmp/t" --kernel-reads pathfinder
BADPAT="--launches: bad value 'later' (expected sync, async or recorded)" bad --trace "$tmp/t" --launches later
BADPAT="--launches async needs --trace" bad --launches async
BADPAT="--launches recorded needs --trace" bad --launches recorded
BADPAT="--launches recorded: variant 'uvm' decides nothing at a launch" bad --trace "$tmp/t" --launches recorded --variant static,uvm
BADPAT="--moves: cannot write $tmp/missing/m" bad --moves "$tmp/missing/m"
# --moves: each Ember variant's moves as a trace's M lines, after a line naming it; others write none
"$SIM" --trace "$tmp/t" --variant uvm,static,adaptive --moves "$tmp/m" >/dev/null || fail "--moves run"
[ "$(grep -c '^#' "$tmp/m")" = 2 ] && grep -qx '# static' "$tmp/m" && grep -qx '# adaptive' "$tmp/m" ||
	fail "--moves headers: $(cat "$tmp/m")"
grep -qE '^M [0-9]+ 0 0 [0-9]+ P$' "$tmp/m" || fail "--moves lines: $(cat "$tmp/m")"
echo "ok: --moves"
BADPAT="cannot open profile" bad --profile "$tmp/missing"
printf 'device_read_gbps = 100\nwarp_speed = 9\n' >"$tmp/p"; BADPAT="unknown profile key 'warp_speed'" bad --profile "$tmp/p"
printf 'promote_gbps = fast\n' >"$tmp/p"; BADPAT="promote_gbps: bad value 'fast' (expected a positive number" bad --profile "$tmp/p"
printf 'launch_us = -1\n' >"$tmp/p"; BADPAT="launch_us" bad --profile "$tmp/p"

# --help and the profile round trip
"$SIM" --help | grep -- "--working-set" >/dev/null || fail "--help lacks --working-set"
"$SIM" --print-profile >"$tmp/p1" || fail "--print-profile"
grep -q '^device_read_gbps *= 4300' "$tmp/p1" || fail "default profile lacks device_read_gbps = 4300"
"$SIM" --profile "$tmp/p1" --print-profile >"$tmp/p2" || fail "printed profile does not load"
cmp -s "$tmp/p1" "$tmp/p2" || fail "profile round trip differs"
printf '# slower link\nmapped_read_gbps = 25.5 # half\n\n' >"$tmp/p"
"$SIM" --profile "$tmp/p" --print-profile | grep '^mapped_read_gbps *= 25.5' >/dev/null || fail "profile value not applied"
echo "ok: help, profile round trip"

# JSON: one object per variant with the documented fields
out=$("$SIM" --workload reread --working-set 8G --budget 16G --variant all --json) || fail "json run"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 5 ] || fail "--variant all gave $(printf '%s\n' "$out" | wc -l) lines"
first=${out%%$'\n'*} # not through head: under pipefail, its early exit can fail the printf before it
for f in workload working_set budget variant sim_seconds bytes_promoted bytes_demoted faults evictions bytes_evicted; do
	grep -q "\"$f\":" <<<"$first" || fail "JSON lacks $f"
done
for v in uvm prefetch mapped static adaptive; do
	grep -q "\"variant\":\"$v\"" <<<"$out" || fail "all lacks $v"
done
"$SIM" --workload scan --working-set 8G --variant uvm | grep '^workload' >/dev/null || fail "table header"
echo "ok: json and table"

# Every workload runs
for w in reread strided random window phase decode scan wavefront train; do
	"$SIM" --workload $w --working-set 4G --budget 2G --variant uvm,uvm-noprefetch,prefetch,mapped --json >/dev/null ||
		fail "workload $w"
done
echo "ok: every workload"

# --sweep: 9 ratios per variant
n=$("$SIM" --workload random --budget 1G --variant uvm,mapped --sweep --json | wc -l)
[ "$n" -eq 18 ] || fail "--sweep gave $n lines, expected 18"
echo "ok: sweep"

# --plot: an image with matplotlib, else one line and a non-zero exit
"$SIM" --workload reread --budget 1G --variant uvm,mapped --plot "$tmp/o.png" >/dev/null 2>"$tmp/err"
rc=$?
if python3 -c 'import matplotlib' 2>/dev/null; then
	[ $rc -eq 0 ] && [ -s "$tmp/o.png" ] || fail "--plot with matplotlib: rc $rc"
else
	[ $rc -ne 0 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q matplotlib "$tmp/err" ||
		fail "--plot without matplotlib: rc $rc, stderr: $(cat "$tmp/err")"
fi
echo "ok: plot (rc $rc)"

# A trace: replayed, malformed lines counted, budget from the D line
cat >"$tmp/tr" <<'TR'
ember-trace 1
D 0 4294967296 3865470566 3435973836
A 100 0 0 8589934592 m
L 200 7 1 0:0:8589934592
this line is garbage
L 300 7 1 0:0:8589934592
F 400 0
E 500
TR
out=$("$SIM" --trace "$tmp/tr" --variant uvm,mapped) || fail "trace replay"
grep -q "1 malformed lines skipped (first at line 5)" <<<"$out" || fail "trace: malformed count: $out"
out=$("$SIM" --trace "$tmp/tr" --variant uvm --json 2>/dev/null) || fail "trace json"
[ "$(field "$out" budget)" = 4294967296 ] || fail "trace budget from D line: $out"
[ "$(field "$out" trace_skipped)" = 1 ] || fail "trace_skipped: $out"
[ "$(field "$out" bytes_evicted)" -gt 0 ] || fail "8G over a 4G budget evicts: $out"
out=$("$SIM" --trace "$tmp/tr" --variant uvm --budget 16G --json 2>/dev/null)
[ "$(field "$out" budget)" = 17179869184 ] || fail "--budget overrides D: $out"
echo "ok: trace"
echo PASS
