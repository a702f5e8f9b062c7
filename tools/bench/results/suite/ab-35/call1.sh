#!/usr/bin/env bash
# session 35, call 1. (1) ember-touch-probe (4 GiB) with madvise(MADV_POPULATE_WRITE): whether the kernel
# makes the driver's host pages faster than the host's touches (10.7 GB/s from eight threads, ab-34's
# call 6). (2) The head (6445d0d) against try/gap-halves (1a75a34, carried as build/lib-try/libember.so,
# "gap": a region's reuse gap shrinks at most by half a touch) under adaptive at 1.5x: llama.cpp and
# hf-llama, three rounds of a process each in turn, the order turning each round. On recorded clocks the
# branch demotes less (hf-llama 1.85 -> 0.57 GiB, llama.cpp 3.29 -> 2.02); the GPU decides.
source tools/bench/device-call.sh c1
stage "touch probe"
timeout 90 build/bin/ember-touch-probe $((4 << 30)) >"$R/touch-probe.json" 2>"$R/touch-probe.err"
echo "rc $?" >>"$R/touch-probe.err"
pack
cp build/lib/libember.so build/lib-head.so
cp build/lib-try/libember.so build/lib-gap.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
for round in 0 1 2; do
  order=(head gap)
  [ $((round % 2)) = 1 ] && order=(gap head)
  for v in "${order[@]}"; do
    time_left 80 || continue
    use "$v"
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
cat "$R/touch-probe.json" "$R/touch-probe.err"
for f in "$R"/*-*-*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('d2h_bytes'), r.get('error'))
" "$f"
done
cat "$R/progress.log"
