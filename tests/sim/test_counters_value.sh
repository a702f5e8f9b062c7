#!/bin/bash
# The access counters fix the wavefront's blindness in the model without
# costing what the launch scan already sees, and
# tools/bench/results/counters.jsonl regenerates by one command.
#   test_counters_value.sh EMBER_SIM COUNTERS_PY COUNTERS_JSONL
# nw-scalar is the suite's Needleman-Wunsch whose launch scan takes a scalar
# for a count and credits one region of each matrix: with the launch scan
# alone Ember-adaptive promotes those two regions and reads the rest mapped.
# scan@1.5x is the star schema, whose scan credits every region its kernels
# read: the counters' evidence replaces the scan's guess there with the same
# demand (crediting each notification instead ran it 0.885x as fast).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
PY=${2:?counters.py}
COMMITTED=${3:?counters.jsonl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One command regenerates the cases; the model is deterministic, so they must
# equal the committed file's lines for the same cases, byte for byte.
python3 "$PY" --sim "$SIM" --only '^(nw-scalar@|scan@1\.5x$|nw-0\.5-adaptive$)' --out "$tmp/c.jsonl" --jobs 2 >"$tmp/table"
cat "$tmp/table"
[ "$(wc -l <"$tmp/c.jsonl")" -eq 4 ] || fail "expected 4 cases"
grep -E '"case": "(nw-scalar@|scan@1\.5x"|nw-0\.5-adaptive")' "$COMMITTED" >"$tmp/committed" || fail "no such case in $COMMITTED"
diff "$tmp/committed" "$tmp/c.jsonl" || fail "$COMMITTED is stale: run python3 tools/bench/counters.py"

# field CASE MODE NAME: a number from the regenerated file
get() {
	python3 - "$tmp/c.jsonl" "$@" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    row = json.loads(line)
    if row["case"] == sys.argv[2]:
        print(row[sys.argv[3]][sys.argv[4]])
EOF
}
for c in nw-scalar@0.5x nw-scalar@1.5x; do
	scan=$(get $c scan window_seconds)
	for m in counters counters_prompt; do
		t=$(get $c $m window_seconds)
		check "$t < $scan" "$c: adaptive with $m is faster than with the launch scan alone ($t s against $scan s)"
		check "$(get $c $m bytes_promoted) > $(get $c scan bytes_promoted)" \
			"$c: $m promote regions the kernel reads, which the scan never credits"
		check "$(get $c $m credited) > 0" "$c: $m notifications went through the shim's reader"
	done
done
# Delivered as the shim delivers them (a launch that finds notifications wakes the worker to drain the
# queue), and at each launch's end, the counters bring the wavefront at 0.5x within 1.1x of everything resident.
for m in counters counters_prompt; do
	check "$(get nw-scalar@0.5x $m window_seconds) <= 1.1 * $(get nw-scalar@0.5x resident window_seconds)" \
		"nw-scalar@0.5x: $m within 1.1x of everything resident"
done
# The wavefront as recorded on the H200 (nw.cu under adaptive at 0.5x), its launches reading what the
# model of nw.cu reads: the scan credits both matrices whole, which fit, so the launch scan alone is
# already at everything resident's time, and the counters keep it there.
r=nw-0.5-adaptive
check "$(get $r counters window_seconds) <= 1.1 * $(get $r resident window_seconds)" \
	"$r (recorded): counters within 1.1x of everything resident"
check "$(get $r counters window_seconds) <= $(get $r scan window_seconds)" "$r (recorded): counters match the scan"
# The star schema: every notification names a region the scan credited at that launch, so nothing is
# credited twice or withheld, and the run is the scan's to the nanosecond.
check "$(get scan@1.5x counters window_seconds) == $(get scan@1.5x scan window_seconds)" \
	"scan@1.5x: counters give the scan's time"
check "$(get scan@1.5x counters repeats) > 0" "scan@1.5x: notifications went through the shim's reader"
check "$(get scan@1.5x counters credited) == 0" "scan@1.5x: none credited on top of the scan's credit"
check "$(get scan@1.5x counters withheld) == 0" "scan@1.5x: no credit withheld from regions kernels read"
# In the committed file, adaptive with counters is nowhere slower than with the launch scan alone.
slower=$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    row = json.loads(line)
    if row["counters"]["window_seconds"] > row["scan"]["window_seconds"]:
        print(row["case"])
' "$COMMITTED")
[ -z "$slower" ] || fail "counters slower than the launch scan alone in:" $slower
echo "ok: counters at least match the launch scan alone in every case of $COMMITTED"
echo PASS
