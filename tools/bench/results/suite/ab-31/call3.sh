#!/usr/bin/env bash
# session 31, call 3, at the head. (1) The sparse probe again, its both-ways case now two free streams (half
# the warps read, half write) beside call 1's copy (each write waits for its read): the copy made 49-50 GB/s
# together, yet bitonic's adaptive record moves its mapped share at about 59 GB/s both ways, so the copy is
# not the link's ceiling. (2) llama.cpp 13B F16 at 1.5x, static and adaptive, three rounds of a llama-bench
# process each in turn (EMBER_LLAMA_ROUNDS_BIG): its records were one process each, 4b603ab's and 7cf2bea's.
# (3) bitonic at 1.5x, static and adaptive, a process each, as time allows (static's record is 4b603ab's).
source tools/bench/device-call.sh c3
stage "sparse probe"
timeout 120 build/bin/ember-sparse-probe $((4 << 30)) >"$R/sparse-probe.json" 2>"$R/sparse-probe.err"
echo "rc $?" >>"$R/sparse-probe.err"
cp "$R/sparse-probe.json" "$R/suite/"
pack
stage llama
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS="static adaptive" EMBER_LLAMA_ROUNDS_BIG=3 \
  EMBER_SUITE_TIMEOUT=90 timeout 330 bash tools/bench/suite.sh llama >"$R/suite.log" 2>&1
pack
if time_left 100; then
  stage bitonic
  EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS="static adaptive" EMBER_SUITE_ONLY=bitonic \
    EMBER_SUITE_TIMEOUT=45 EMBER_SUITE_WALL=$((500 - SECONDS)) timeout $((530 - SECONDS)) \
    bash tools/bench/suite.sh kernels >>"$R/suite.log" 2>&1
fi
stage done
pack
python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('processes'), r.get('h2d_bytes'), r.get('d2h_bytes'), r.get('bound_seconds'), r.get('error'))
" "$R/suite/suite.jsonl"
cat "$R/sparse-probe.err" "$R/progress.log" "$R/suite/progress.log"
