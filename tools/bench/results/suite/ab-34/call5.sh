#!/usr/bin/env bash
# session 34, call 5, at a7d51db (the host's touches a region at a time): hf-llama 13b and hf-mixtral 8x1.5b
# at 1.5x of a 16 GiB budget, resident, static and adaptive, one process each: the records' load (build and
# draw) and token times at the head, resident's in the same call for the initialisation criterion.
source tools/bench/device-call.sh c5
stage "hf at 1.5x"
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS="resident static adaptive" \
  EMBER_SUITE_TIMEOUT=90 timeout 480 bash tools/bench/suite.sh hf >"$R/suite.log" 2>&1
stage done
pack
python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(r.get('bench'), r.get('variant'), 'load', r.get('load_seconds'), 'tok', r.get('seconds'), r.get('runs_seconds'), r.get('h2d_bytes'), r.get('d2h_bytes'), r.get('error'))
" "$R/suite/suite.jsonl"
grep -h "at exit" "$R"/suite/logs/*.log | cut -c1-200
cat "$R/progress.log" "$R/suite/progress.log"
