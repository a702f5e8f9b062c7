#!/usr/bin/env bash
# Session 38, call 5: the transformers models under the exchange at a host phase. fc6760b (d632657's
# shim) against its parent 14b2aa7 through the harness, adaptive at 1.5x of a 16 GiB budget, hf-llama 13b
# and hf-mixtral 8x1.5b, a process each in turn, EMBER_LOG=debug: whether the load or the generation
# sees a host phase while it lasts, what its exchange moves, and the 8-token times.
source tools/bench/device-call.sh c5
cp build/lib/libember.so build/lib-head.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
for round in 0 1; do
  for m in llama mixtral; do
    order="head main"; [ $round = 1 ] && order="main head"
    for v in $order; do
      time_left 70 || continue
      use $v
      skip="hf-mixtral-*"; [ $m = mixtral ] && skip="hf-llama-*"
      stage "hf-$m $v $round"
      out=$R/hf-$m-$v-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
      EMBER_LOG=debug EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_SKIP="$skip" \
        EMBER_SUITE_TIMEOUT=90 timeout $((560 - SECONDS)) bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
      gzip -f "$out"/logs/*.log 2>/dev/null
      pack
    done
  done
done
use head
stage done
pack
records | sort
for f in "$R"/*/logs/*.log.gz; do echo "$f: $(zcat "$f" | grep -c 'host phase [0-9]') phases, $(zcat "$f" | grep -c 'exchanged at a host phase') exchanges"; done
cat "$R/progress.log"
