#!/usr/bin/env bash
# ember-callbench --graph: a llama.cpp-shaped graph launched through the simulated driver directly and
# through Ember, under static and adaptive: one well-formed record per variant (no timing is asserted: the
# figures are the benchmark's, not this test's); a bad weights size and a missing argument are refused.
#   test_callbench_graph.sh BUILD
set -euo pipefail
build=$1
for mode in static adaptive; do
  out=$(EMBER_MODE=$mode EMBER_BUDGET=256M CALLBENCH_GRAPH_WEIGHTS=384M EMBER_LOG=warn \
    "$build/bin/ember-callbench" --graph "$build/lib/libember-sim.so" "$build/lib/libember.so" test)
  MODE=$mode python3 - "$out" <<'PY'
import json, os, sys
rows = [json.loads(l) for l in sys.argv[1].splitlines()]
assert [r["variant"] for r in rows] == ["direct", "ember"], rows
for r in rows:
    assert r["bench"] == "graph-launch" and r["mode"] == os.environ["MODE"] and r["nodes"] == 600, r
    assert r["weights_bytes"] == 384 << 20 and r["launches"] == 60, r
    assert 0 < r["p10_us"] <= r["median_us"] <= r["p90_us"] and r["mean_us"] > 0, r
PY
done
# a weights size that is not one is refused, saying so, not read as some other size
if err=$(CALLBENCH_GRAPH_WEIGHTS=6X "$build/bin/ember-callbench" --graph "$build/lib/libember-sim.so" \
  "$build/lib/libember.so" 2>&1 >/dev/null); then
  echo "ember-callbench --graph took CALLBENCH_GRAPH_WEIGHTS=6X" >&2; exit 1
fi
grep -q 'CALLBENCH_GRAPH_WEIGHTS=6X is not a size' <<<"$err" || { echo "no clear error: $err" >&2; exit 1; }
# a missing argument is a usage error, not a crash
if "$build/bin/ember-callbench" --graph "$build/lib/libember-sim.so" 2>/dev/null; then
  echo "ember-callbench --graph with one library should fail" >&2; exit 1
fi
echo "callbench --graph: ok"
