#!/usr/bin/env bash
# session 28, call 8: (1) star at 1.5x under adaptive at the default 97/93, EMBER_LOG=debug with timestamps: in
# ab-27's call 7 (H200) no advice or prefetch held the worker 20 ms or more, yet the tables' room came 2.5 s after
# the columns' fill; the worker now logs, while wanted tables wait, what keeps each resident from giving way
# (adaptive.c, log_wanted_wait). (2) The 1.5x matrix of static and adaptive under the defaults of this build
# (97/93, EMBER_POPULATE_HOST=1 under manage-all), one process each (suite.sh): llama.cpp 13B F16, hf-llama 13b
# and hf-mixtral 8x1.5b (their initialisation now with the host's touches), then the kernels in the order of their
# distance from the bound, as time allows (EMBER_SUITE_WALL: a record that would start later is written as not run).
source tools/bench/device-call.sh c8
out=$R/star-debug
mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
stage "star adaptive 97/93, debug log"
EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_LOG=debug EMBER_LOG_TIME=1 EMBER_SUITE_VARIANTS=adaptive \
  EMBER_SUITE_ONLY=star EMBER_SUITE_TRACE='star-1.5-adaptive' EMBER_SUITE_TIMEOUT=40 \
  timeout 60 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
pack
stage suite
wall=$((470 - SECONDS))
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS="static adaptive" EMBER_SUITE_TIMEOUT=80 \
  EMBER_SUITE_WALL=$wall EMBER_SUITE_ONLY="star kmeans bfs cnn nw radix pathfinder bitonic" \
  timeout $((wall + 90)) bash tools/bench/suite.sh llama hf kernels >"$R/suite.log" 2>&1
stage done
pack
python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(r.get('bench'), r.get('variant'), round(r.get('seconds') or 0,4), r.get('runs_seconds'), r.get('bound_seconds'), r.get('load_seconds'), r.get('error'))
" "$R/suite/suite.jsonl"
grep -h 'wanted regions wait\|advice to prefer\|a prefetch to' "$out"/logs/*.log | head -40
cat "$R/progress.log" "$R/suite/progress.log"
