#!/usr/bin/env bash
# session 29, call 2: the 1.5x matrix under adaptive at df189a5 (the exchange of a region read less a cycle for
# one read more), against the static records of 4b603ab: llama.cpp 13B F16, hf-llama 13b and hf-mixtral 8x1.5b
# (one process each, traced: the tokens' churn must stay under 5% of the weights), then the kernels, three
# processes each (star and bfs ran in call 1), bitonic last as time allows.
source tools/bench/device-call.sh c2
stage suite
wall=$((450 - SECONDS))
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_PROCESSES=3 \
  EMBER_SUITE_TIMEOUT=80 EMBER_SUITE_WALL=$wall EMBER_SUITE_ONLY="kmeans cnn nw radix pathfinder bitonic" \
  EMBER_SUITE_TRACE='llama-cpp-1.5-adaptive hf-mixtral-1.5-adaptive hf-llama-1.5-adaptive' \
  timeout $((wall + 80)) bash tools/bench/suite.sh llama hf kernels >"$R/suite.log" 2>&1
stage done
pack
python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(r.get('bench'), r.get('variant'), round(r.get('seconds') or 0,4), r.get('runs_seconds'), r.get('bound_seconds'), r.get('bytes_demoted'), r.get('error'))
" "$R/suite/suite.jsonl"
cat "$R/progress.log" "$R/suite/progress.log"
