#!/usr/bin/env bash
# session 30, call 2: call 1 again with more processes, each traced with EMBER_LOG=debug: star at 1.5x under
# adaptive, the margin for small tables read densely (the head, 3ab2f81) against its parent a782b68 (the base),
# four rounds of a process each in turn. Call 1: first runs 0.85-0.86 s against 2.93-3.02, but one of the
# head's three took 11.1 s untraced. Then transformers and llama.cpp once each under the head (the replays:
# unchanged), as time allows.
source tools/bench/device-call.sh c2
cp build/lib/libember.so build/lib-head.so
cp build/lib-base/libember.so build/lib-base.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
for round in 0 1 2 3; do
  for v in head base; do
    [ $((round % 2)) = 1 ] && v=$([ $v = base ] && echo head || echo base) # the order turns each round
    time_left 40 || continue
    stage "star adaptive $v round $round"
    out=$R/star-$v-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    use $v
    EMBER_LOG=debug EMBER_SUITE_TRACE=star-1.5-adaptive EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 \
      EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_ONLY=star EMBER_SUITE_TIMEOUT=60 timeout 90 \
      bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
    pack
  done
done
use head
if time_left 130; then
  stage "hf under the head"
  out=$R/hf; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_TIMEOUT=60 timeout 120 \
    bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
  pack
fi
if time_left 80; then
  stage "llama.cpp under the head"
  out=$R/llama; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_TIMEOUT=60 timeout 100 \
    bash tools/bench/suite.sh llama >"$out/suite.log" 2>&1
  pack
fi
stage done
pack
for f in "$R"/*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('error'))
" "$f"
done
cat "$R/progress.log"
