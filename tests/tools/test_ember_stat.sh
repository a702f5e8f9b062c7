#!/usr/bin/env bash
# ember-stat on the simulated driver: a running program's live file (by
# PID), and the statistics written at exit, as text and as --json with the
# documented fields.
#   test_ember_stat.sh BUILD_DIR
set -euo pipefail
bin=$1/bin
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; true' EXIT

# a program still running: the demo, long enough to be looked at
"$bin/ember-run" --driver sim --budget 64M --live 1 -- "$bin/ember-demo" 48 1000000 >"$dir/demo.out" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s "/dev/shm/ember-$pid.live" ] && break; sleep 0.1; done
[ -s "/dev/shm/ember-$pid.live" ] || fail "no live file for $pid"
out=$("$bin/ember-stat" "$pid") || fail "ember-stat $pid: $out"
grep -q "^process $pid: Ember adaptive mode (live)" <<<"$out" || fail "live text: $out"
grep -q '^GPU 0: .* resident of a 64.0 MiB budget.* mapped$' <<<"$out" || fail "live GPU line: $out"
"$bin/ember-stat" --json "$pid" >"$dir/live.json" || fail "ember-stat --json $pid"
python3 - "$dir/live.json" "$pid" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["source"] == "live" and s["pid"] == int(sys.argv[2]) and s["mode"] == "adaptive", s
d = s["devices"][0]
assert d["budget_bytes"] == 64 << 20 and d["resident_bytes"] <= d["high_bytes"], d
assert len(s["allocations"]) == 2 and all(a["map"] and a["kind"] == "managed" for a in s["allocations"]), s
assert d["mapped_bytes"] is not None and d["resident_bytes"] + d["mapped_bytes"] <= sum(a["size"] for a in s["allocations"]), d
assert all(a["demand"] is not None and len(a["demand"]) == len(a["map"]) for a in s["allocations"]), s
PY
kill "$pid"
wait "$pid" 2>/dev/null || true
rm -f "/dev/shm/ember-$pid.live" # a killed program cannot remove its own
pid=

# after a program: its exit statistics
# (a setting whose value JSON must escape: a pattern matching no program; the demo's C kernels declare no
# pointers to const, so EMBER_READ_MOSTLY advises nothing)
EMBER_DISABLE_FOR='x"y\z' EMBER_READ_MOSTLY=1 EMBER_KEEP_FREED=16M "$bin/ember-run" --driver sim --budget 64M --stats "$dir/stats.json" -- \
  "$bin/ember-demo" 48 3 >"$dir/demo.out" 2>&1 || fail "the demo failed: $(cat "$dir/demo.out")"
out=$("$bin/ember-stat" --file "$dir/stats.json") || fail "ember-stat --file: $out"
grep -q '^the program: Ember adaptive mode (at exit)' <<<"$out" || fail "exit text: $out"
grep -q '^settings: .*EMBER_BUDGET=64M' <<<"$out" || fail "exit settings: $out"
grep -q '^read-mostly advice on 0.00 GiB' <<<"$out" || fail "exit read-mostly line: $out"
grep -q 'promotions and 0 demotions (' <<<"$out" || fail "exit moves: $out"
grep -q '^0 stream-ordered allocations were given freed memory kept (EMBER_KEEP_FREED); 0.00 GiB kept at exit, 0.00 GiB let go by pool trims' <<<"$out" ||
  fail "exit kept line: $out"
"$bin/ember-stat" --json --file "$dir/stats.json" >"$dir/exit.json"
python3 - "$dir/exit.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["source"] == "exit" and s["pid"] is None and s["mode"] == "adaptive", s
d = s["devices"][0]
assert d["bytes_promoted"] > 0 and d["promotions"] > 0 and d["peak_bytes"] <= d["high_bytes"], d
assert isinstance(d["refreshes"], int) and isinstance(d["bytes_refreshed"], int), d
assert d["bytes_wanted"] == 0, d  # the demo's arrays are not small tables beside large ones
assert d["bytes_margin"] == 0, d
assert d["bytes_phase_exchanged"] == 0, d  # nothing exchanged at a host phase
assert d["bytes_vmm_on_host"] == 0, d  # no cuMemCreate memory
assert isinstance(s["launches_settled"], int), s
assert s["launches_past_scan"] == 0, s
assert s["launches_tensor_lists"] == 0, s
assert s["launches_cat_inputs"] == 0, s
assert s["settings"]["EMBER_BUDGET"] == "64M" and s["settings"]["EMBER_DISABLE_FOR"] == 'x"y\\z', s["settings"]
assert "EMBER_HIGH_WATERMARK" not in s["settings"], s["settings"]  # left at its default: not set
assert s["kept_freed"] == {"reuses": 0, "bytes_kept": 0, "bytes_trimmed": 0}, s["kept_freed"]  # the demo frees nothing in stream order
assert s["read_mostly"] == {"bytes_advised": 0, "bytes_withdrawn": 0, "allocations_written": 0}, s["read_mostly"]
assert len(s["allocations"]) == 2 and all(a["map"] is None and a["demand"] is None for a in s["allocations"]), s
assert all(a["resident_bytes"] + a["mapped_bytes"] == a["size"] for a in s["allocations"] if not a["freed"]), s
PY

# cuMemCreate memory past the budget made in host memory (manage-all): named in the GPU's line
python3 - "$dir/stats.json" "$dir/vmm.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["devices"][0]["bytes_vmm_on_host"] = 3 << 30
json.dump(s, open(sys.argv[2], "w"))
PY
out=$("$bin/ember-stat" --file "$dir/vmm.json") || fail "ember-stat --file vmm.json: $out"
grep -q '; 3.00 GiB of cuMemCreate memory made in host memory past the budget' <<<"$out" || fail "vmm line: $out"

# bad input: a clear error, a status that says which
"$bin/ember-stat" 999999999 >/dev/null 2>"$dir/err" && fail "a missing process was shown"
grep -q 'cannot read /dev/shm/ember-999999999.live' "$dir/err" || fail "missing process message: $(cat "$dir/err")"
echo '{"devices": 3}' >"$dir/bad.json"
set +e; "$bin/ember-stat" --file "$dir/bad.json" >/dev/null 2>"$dir/err"; rc=$?; set -e
[ "$rc" = 2 ] || fail "a malformed record gave status $rc"
"$bin/ember-stat" --bogus >/dev/null 2>&1 && fail "a bad argument was accepted"
echo "ember-stat: ok"
