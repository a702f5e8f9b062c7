#!/usr/bin/env bash
# Session 37, call 7 (call 6 again): where the moves that fail with CUresult 201 (CUDA_ERROR_INVALID_CONTEXT) fail.
# The head's failure warning is now followed, under EMBER_LOG=debug, by the thread that issued the move,
# its current context, the move's context and stream; the worker says when it cannot enter a context;
# and a move of a freed allocation no longer reports 201. radix (three of four demotions failed in call
# 4) at 1.5x under adaptive, two processes, traced: call 5 printed no failure, yet each process
# demoted one batch of its 256-region exchange; the trace's M lines show what became of the others.
# Call 6 traced three demotions of the exchange finishing failed with no error and no warning: refused at
# issue, which only a freed allocation should be. The worker now says why it refused each.
source tools/bench/device-call.sh c7
for run in radix:0; do
  w=${run%%:*} i=${run#*:}
  [ "$SECONDS" -lt 200 ] || continue
  stage "$w adaptive $i"
  out=$R/$w-adaptive-$i; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_LOG=debug EMBER_SUITE_TRACE="$w-1.5-adaptive" EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive \
    EMBER_SUITE_ONLY=$w EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  grep -h -A1 'failed (CUresult\|could not enter\|refused at issue' "$out"/logs/*.log | cut -c1-300
  gzip -f "$out"/logs/*.log
  pack
done
stage done
pack
records
for f in "$R"/*/diag/*.trace.gz; do echo "== $f"; zcat "$f" | grep '^M'; done
cat "$R/progress.log"
