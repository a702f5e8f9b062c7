#!/usr/bin/env bash
# session 35, call 3, at 474d414 ("head": MADV_POPULATE_WRITE reverted, the shim as 6445d0d's) against
# try/gap-halves on it (b9875f0, "gap", build/lib-gap.so: a region's reuse gap shrinks at most by half a
# touch) under adaptive at 1.5x: star, hf-llama and hf-mixtral, rounds of a process each in turn, the order
# turning each round, until the call's time is spent. Calls 1 and 2 left it undecided: by the medians of
# three processes, gap ran star 5% and hf-llama 4% faster, llama.cpp 1%, bfs 1% and hf-mixtral 3% slower.
source tools/bench/device-call.sh c3
cp build/lib/libember.so build/lib-head.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
for round in 0 1 2 3 4; do
  order=(head gap)
  [ $((round % 2)) = 1 ] && order=(gap head)
  for v in "${order[@]}"; do
    time_left 110 || continue
    use "$v"
    stage "star adaptive $v round $round"
    out=$R/star-$v-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_ONLY=star EMBER_SUITE_TIMEOUT=60 \
      timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
    pack
    stage "hf adaptive $v round $round"
    out=$R/hf-$v-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_TIMEOUT=90 \
      timeout $((530 - SECONDS)) bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
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
