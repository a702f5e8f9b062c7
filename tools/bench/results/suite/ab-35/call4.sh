#!/usr/bin/env bash
# session 35, call 4, at 7a0aa2d (a region's reuse gap shrinks at most by half a touch): llama.cpp 13B F16
# at 1.5x under adaptive, processes one after another until 170 s have gone (the session's device time is
# nearly spent). Call 1 ran three processes of the same rule (as try/gap-halves): 1.629, 1.856, 1.645 s.
source tools/bench/device-call.sh c4
for round in 0 1 2 3 4; do
  [ "$SECONDS" -lt 170 ] || continue
  stage "llama adaptive round $round"
  out=$R/llama-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_TIMEOUT=90 \
    timeout $((260 - SECONDS)) bash tools/bench/suite.sh llama >"$out/suite.log" 2>&1
  pack
done
stage done
pack
for f in "$R"/llama-*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('d2h_bytes'), r.get('error'))
" "$f"
done
cat "$R/progress.log"
