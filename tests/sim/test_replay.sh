#!/bin/bash
# A real run recorded on the H200 (tools/bench/validate.sh: ember-uvm-bench
# reread, 24 GiB, 20 passes, 16 GiB budget, Ember-static), replayed: the
# model's time for the timed phase is within 25% of the 4.412 s measured,
# and it promotes the same 14.40 GiB the shim did.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
traces=${2:?usage: test_replay.sh ember-sim results/validation}
out=$("$SIM" --trace "$traces/reread-static.trace.gz" --variant static --json 2>/dev/null)
t=$(field "$out" window_seconds)
echo "reread static replayed: ${t}s (measured 4.412 s)"
check "$t > 4.412 * 0.75 && $t < 4.412 * 1.25" "replay within 25% of the measurement"
check "$(field "$out" bytes_promoted) == 15460204544" "the same bytes promoted as the shim's own record"
# Under another variant the same recording answers a what-if: stock UVM collapses.
u=$(field "$("$SIM" --trace "$traces/reread-static.trace.gz" --variant uvm --json 2>/dev/null)" window_seconds)
check "$u > 5 * $t" "the same run under stock UVM is at least 5x slower (${u}s)"
echo PASS
