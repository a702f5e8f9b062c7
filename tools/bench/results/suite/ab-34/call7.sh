#!/usr/bin/env bash
# session 34, call 7: llama.cpp 13B F16 at 1.5x under adaptive, the head (7a9ee90) against the head with
# 5183824 (the per-cycle rule's touches of one cycle) reverted, carried as build/lib-try/libember.so
# ("reverted"). On its recorded clock the diag trace (older than 50982e9) demotes 3.29 GiB under the head
# against 2.92 reverted; the adaptive record (50982e9) predates the rule. Two rounds of a process each in
# turn, the order turning; no new round after 200 s (the session's device time is nearly spent).
source tools/bench/device-call.sh c7
cp build/lib/libember.so build/lib-head.so
cp build/lib-try/libember.so build/lib-reverted.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
for round in 0 1; do
  order=(head reverted)
  [ $((round % 2)) = 1 ] && order=(reverted head)
  for v in "${order[@]}"; do
    [ "$SECONDS" -lt 200 ] || continue
    stage "llama adaptive $v round $round"
    out=$R/llama-$v-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    use "$v"
    EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_TIMEOUT=90 \
      timeout $((290 - SECONDS)) bash tools/bench/suite.sh llama >"$out/suite.log" 2>&1
    pack
  done
done
use head
stage done
pack
for f in "$R"/llama-*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('d2h_bytes'), r.get('error'))
" "$f"
done
grep -h "at exit" "$R"/llama-*/logs/*.log | cut -c1-200
cat "$R/progress.log"
