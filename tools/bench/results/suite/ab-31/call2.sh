#!/usr/bin/env bash
# session 31, call 2. (1) The kernels whose bounds were an even share of their traffic, now counted array by
# array (traffic_by_array: pathfinder's 4 MiB rows had been spread over its wall), at 1.5x under static and
# adaptive, three processes each in turn, at the head: their records and bounds anew; call 1's adaptive
# processes ran 2-6% slower than df189a5's records (nw 0.341 s against 0.326, radix 1.09 against 1.03, bfs
# 0.70 against 0.67), and static here against its 3ab2f81 records says whether that is this machine.
# (2) star at 1.5x under adaptive: try/margin-to-high (after the tables' margin, reclamation back under the
# high watermark and no further), carried as build/lib-try/libember.so, against the head, three rounds of a
# process each in turn (session 30's call 5, which was not run).
source tools/bench/device-call.sh c2
stage kernels
wall=$((400 - SECONDS))
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS="static adaptive" EMBER_SUITE_PROCESSES=3 \
  EMBER_SUITE_TIMEOUT=60 EMBER_SUITE_WALL=$wall EMBER_SUITE_ONLY="pathfinder nw cnn radix bfs kmeans" \
  timeout $((wall + 70)) bash tools/bench/suite.sh kernels >"$R/suite.log" 2>&1
pack
cp build/lib/libember.so build/lib-head.so
cp build/lib-try/libember.so build/lib-try.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
for round in 0 1 2; do
  for v in head try; do
    [ $((round % 2)) = 1 ] && v=$([ $v = try ] && echo head || echo try) # the order turns each round
    time_left 25 || continue
    stage "star adaptive $v round $round"
    out=$R/star-$v-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    use $v
    EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_ONLY=star \
      EMBER_SUITE_TIMEOUT=40 timeout 60 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
    pack
  done
done
use head
stage done
pack
for f in "$R/suite/suite.jsonl" "$R"/star-*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('first_seconds'), r.get('d2h_bytes'), r.get('bound_warm_seconds'), r.get('error'))
" "$f"
done
cat "$R/progress.log" "$R/suite/progress.log"
