#!/usr/bin/env bash
# session 33, call 1, at the head (5e07a3b: the policy's note of why victims gave way, in the debug log).
# bfs at 1.5x under adaptive, three processes, traced with EMBER_LOG=debug: adaptive demoted 1.0-1.25 GiB a
# process in ab-32's calls, exchanging vertex-array regions for edge regions between runs, where a replay of
# the trace moves nothing; the log now says which rule chose each victim, and with what demand and reuse gap.
source tools/bench/device-call.sh c1
for round in 0 1 2; do
  time_left 40 || continue
  stage "bfs adaptive round $round"
  out=$R/bfs-adaptive-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_LOG=debug EMBER_SUITE_TRACE="bfs-1.5-adaptive" EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 \
    EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_ONLY=bfs EMBER_SUITE_TIMEOUT=60 timeout 90 \
    bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  pack
done
stage done
pack
for f in "$R"/bfs-*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('d2h_bytes'), r.get('error'))
" "$f"
done
grep -h "gave way\|host phase\|at exit" "$R"/*/logs/*.log | cut -c1-700
cat "$R/progress.log"
