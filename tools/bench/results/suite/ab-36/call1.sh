#!/usr/bin/env bash
# session 36, call 1, at 570b8f7 ("head") against try/pending-heat rebased on it ("ph", build/lib-ph.so:
# first touches since the host last waited for its GPU stay hot for the exchange's survey, and first
# touches begun in one burst are ranked per cycle; every synchronising call tells the policy) under
# adaptive at 1.5x: star, llama.cpp and hf-llama, rounds of a process each in turn, the order turning
# each round, until the call's time is spent. Replayed, star's burst ran 1.09 s against 1.20 and
# llama.cpp's windows 1-6% slower; the GPU decides.
source tools/bench/device-call.sh c1
cp build/lib/libember.so build/lib-head.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
for round in 0 1 2 3; do
  order=(head ph)
  [ $((round % 2)) = 1 ] && order=(ph head)
  for v in "${order[@]}"; do
    time_left 100 || continue
    use "$v"
    stage "star adaptive $v round $round"
    out=$R/star-$v-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_ONLY=star EMBER_SUITE_TIMEOUT=60 \
      timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
    pack
    time_left 80 || continue
    stage "llama adaptive $v round $round"
    out=$R/llama-$v-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_TIMEOUT=90 \
      timeout $((530 - SECONDS)) bash tools/bench/suite.sh llama >"$out/suite.log" 2>&1
    pack
    time_left 60 || continue
    stage "hf-llama adaptive $v round $round"
    out=$R/hf-$v-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_SKIP="hf-mixtral-*" \
      EMBER_SUITE_TIMEOUT=90 timeout $((530 - SECONDS)) bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
    pack
  done
done
use head
stage done
pack
for f in "$R"/*-*-*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('d2h_bytes'), r.get('error'))
" "$f"
done
cat "$R/progress.log"
