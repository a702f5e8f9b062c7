#!/usr/bin/env bash
# session 32, call 2: llama.cpp 13B F16 at 1.5x under adaptive, the head against try/launch-order-cycles (an
# argument that jumps back to where its slides began cycles, and its slides depart nothing: llama.cpp's
# per-layer views through its KV cache slide by half their length layer by layer, each slide departing the
# layer behind, some 110 MiB a token each way in call 1's trace), carried as build/lib-try/libember.so; three
# rounds of a process each in turn, the order turning each round. Replayed: async demotions 5.6 -> 0.3 GiB,
# window 14.3 -> 15.0 s; sync 14.8 -> 14.6 s. The GPU decides.
source tools/bench/device-call.sh c2
cp build/lib/libember.so build/lib-head.so
cp build/lib-try/libember.so build/lib-try.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
for round in 0 1 2; do
  for v in head try; do
    [ $((round % 2)) = 1 ] && v=$([ $v = try ] && echo head || echo try)
    time_left 60 || continue
    stage "llama adaptive $v round $round"
    out=$R/llama-$v-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    use $v
    EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_TIMEOUT=90 \
      timeout $((530 - SECONDS)) bash tools/bench/suite.sh llama >"$out/suite.log" 2>&1
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
