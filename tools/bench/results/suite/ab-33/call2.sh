#!/usr/bin/env bash
# session 33, call 2, at 5183824 (exchanges rank two regions per cycle only when their last touches are of
# one cycle) against its parent 5e07a3b, carried as build/lib-try/libember.so ("parent"). bfs at 1.5x:
# static, adaptive at the head and adaptive under the parent, four rounds of a process each in turn, the order
# turning each round (call 1's log: the parent exchanged vertex regions for edge regions and back, 1.0-2.0 GiB
# a process); then star at 1.5x under adaptive, head and parent, two rounds (the exchange was made for star's
# flights; replayed, the rule leaves star's traces as they were). One call's device time is short: the later
# stages stop at 230 s.
source tools/bench/device-call.sh c2
cp build/lib/libember.so build/lib-head.so
cp build/lib-try/libember.so build/lib-parent.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
early() { [ "$SECONDS" -lt "${1:-230}" ]; }
one() { # workload variant shim round
  local out=$R/$1-$2-$3-$4
  mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  use "$3"
  EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=$2 EMBER_SUITE_ONLY=$1 EMBER_SUITE_TIMEOUT=60 \
    timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  pack
}
for round in 0 1 2 3; do
  order=("static head" "adaptive head" "adaptive parent")
  [ $((round % 2)) = 1 ] && order=("adaptive parent" "adaptive head" "static head")
  for vs in "${order[@]}"; do
    set -- $vs
    early 200 || continue
    stage "bfs $1 $2 round $round"
    one bfs "$1" "$2" "$round"
  done
done
for round in 0 1; do
  for s in head parent; do
    [ $((round % 2)) = 1 ] && s=$([ $s = head ] && echo parent || echo head)
    early 230 || continue
    stage "star adaptive $s round $round"
    one star adaptive "$s" "$round"
  done
done
use head
stage done
pack
for f in "$R"/*-*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('d2h_bytes'), r.get('error'))
" "$f"
done
grep -H "at exit.*demotions" "$R"/*/logs/*.log | sed 's|.*/tmp/c2/||' | cut -c1-200
cat "$R/progress.log"
