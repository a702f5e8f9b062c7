#!/usr/bin/env bash
# Session 46, at d66a0cf, on the H200 of calls 6 and 7. Pack with EMBER_PACK_TESTS=0; carry build-gpu.
# BFS at 1.5x, static and adaptive, two rounds of a process each in turn (static's record predates read-mostly advice).
source tools/bench/device-call.sh c43-8
cell() { # workload scale variant round
  local out=$R/$1-$2-$3-$4
  stage "$1 $2 $3 round $4"
  mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=$2 EMBER_SUITE_VARIANTS=$3 \
    EMBER_SUITE_ONLY=$1 EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
for round in 0 1; do
  order="static adaptive"; [ $round = 1 ] && order="adaptive static"
  for v in $order; do time_left 40 && cell bfs 1.5 $v $round; done
done
finish
