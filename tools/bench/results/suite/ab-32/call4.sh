#!/usr/bin/env bash
# session 32, call 4, at the head: bfs at 1.5x under adaptive with EMBER_EXCHANGE=0 (no exchanges) against the
# default 64, three rounds of a process each in turn: call 1's traces put adaptive's demotions in exchanges
# around the host's check between runs, and call 3 had adaptive at 0.911 of static.
source tools/bench/device-call.sh c4
for round in 0 1 2; do
  for x in 64 0; do
    [ $((round % 2)) = 1 ] && x=$([ $x = 0 ] && echo 64 || echo 0)
    time_left 60 || continue
    stage "bfs adaptive exchange $x round $round"
    out=$R/bfs-x$x-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    EMBER_EXCHANGE=$x EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_ONLY=bfs \
      EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
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
