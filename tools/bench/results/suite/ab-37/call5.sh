#!/usr/bin/env bash
# Session 37, call 5: where the moves that fail with CUresult 201 (CUDA_ERROR_INVALID_CONTEXT) fail.
# The head's failure warning is now followed, under EMBER_LOG=debug, by the thread that issued the move,
# its current context, the move's context and stream; the worker says when it cannot enter a context;
# and a move of a freed allocation no longer reports 201. radix (three of four demotions failed in call
# 4) and cnn (two demotions in call 3) at 1.5x under adaptive, two processes each, one for cnn.
source tools/bench/device-call.sh c5
for run in radix:0 radix:1 cnn:0; do
  w=${run%%:*} i=${run#*:}
  [ "$SECONDS" -lt 200 ] || continue
  stage "$w adaptive $i"
  out=$R/$w-adaptive-$i; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_LOG=debug EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive \
    EMBER_SUITE_ONLY=$w EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  grep -h -A1 'failed (CUresult\|could not enter' "$out"/logs/*.log | cut -c1-300
  gzip -f "$out"/logs/*.log
  pack
done
stage done
pack
records
cat "$R/progress.log"
