#!/usr/bin/env bash
# session 32, call 5, at the head (50982e9's policy): bfs at 1.5x, static and adaptive, four rounds of a process
# each in turn, the order turning each round: call 3's two processes each put adaptive at 0.911 of static,
# call 4's adaptive ran within 0.686-0.707; one call with more processes each, as bfs's records.
source tools/bench/device-call.sh c5
for round in 0 1 2 3; do
  for v in static adaptive; do
    [ $((round % 2)) = 1 ] && v=$([ $v = static ] && echo adaptive || echo static)
    time_left 40 || continue
    stage "bfs $v round $round"
    out=$R/bfs-$v-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=$v EMBER_SUITE_ONLY=bfs EMBER_SUITE_TIMEOUT=60 \
      timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
    pack
  done
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
cat "$R/progress.log"
