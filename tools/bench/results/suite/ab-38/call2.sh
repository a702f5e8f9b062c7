#!/usr/bin/env bash
# Session 38, call 2: try/refresh-unordered (the refresh after a host phase on Ember's stream, not ordered
# before the launch) against the head (14b2aa7), a process each in turn, the order turning each round:
# pathfinder, bfs, star and kmeans at 1.5x of a 16 GiB budget and pathfinder and bfs at 0.5x, adaptive.
source tools/bench/device-call.sh c2
cp build/lib/libember.so build/lib-head.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
one() { # NAME WORKLOAD SCALE (a local called name makes pack write $OUT/NAME.tar.gz: only the last came back whole)
  local name=$1 w=$2 sc=$3
  stage "$name"
  out=$R/$name; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_RESULTS=$out EMBER_SUITE_SCALES=$sc EMBER_SUITE_VARIANTS=adaptive \
    EMBER_SUITE_ONLY=$w EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
for round in 0 1; do
  for w in pathfinder:1.5 bfs:1.5 star:1.5 kmeans:1.5 pathfinder:0.5 bfs:0.5; do
    order="head ru"; [ $round = 1 ] && order="ru head"
    for v in $order; do
      time_left 30 || continue
      use $v; one "${w%%:*}-${w##*:}-$v-$round" "${w%%:*}" "${w##*:}"
    done
  done
done
use head
stage done
pack
records | sort
cat "$R/progress.log"
