#!/usr/bin/env bash
# session 26, call 2, only if call 1 shows star's tables arriving in its first run at 97/93 and the default
# has gone to 97/93 (config.def) in the build that travels: the 1.5x records of static and adaptive under the
# new default, one process each (suite.sh): llama.cpp 13B F16, hf-llama 13b and hf-mixtral 8x1.5b, then the
# kernels in the order of their distance from the bound, as time allows (EMBER_SUITE_WALL: a record that would
# start later is written as not run). Session 25's call 3 ran the same at 7e16b7c.
source tools/bench/device-call.sh c2
grep -q 'EMBER_HIGH_WATERMARK, PERCENT, "97"' shim/config/config.def ||
  { echo "call2: the default is not 97/93: run call 1's decision first" | tee "$R/progress.log"; pack; exit 1; }
stage suite
wall=$((480 - SECONDS))
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS="static adaptive" EMBER_SUITE_TIMEOUT=80 \
  EMBER_SUITE_WALL=$wall EMBER_SUITE_ONLY="star kmeans bfs cnn nw radix pathfinder bitonic" \
  timeout $((wall + 90)) bash tools/bench/suite.sh llama hf kernels >"$R/suite.log" 2>&1
stage done
pack
python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(r.get('bench'), r.get('variant'), round(r.get('seconds') or 0,4), r.get('runs_seconds'), r.get('bound_seconds'), r.get('error'))
" "$R/suite/suite.jsonl"
cat "$R/progress.log" "$R/suite/progress.log"
