#!/usr/bin/env bash
# Session 37, call 6 (call 5 again, traced): where the moves that fail with CUresult 201 (CUDA_ERROR_INVALID_CONTEXT) fail.
# The head's failure warning is now followed, under EMBER_LOG=debug, by the thread that issued the move,
# its current context, the move's context and stream; the worker says when it cannot enter a context;
# and a move of a freed allocation no longer reports 201. radix (three of four demotions failed in call
# 4) at 1.5x under adaptive, two processes, traced: call 5 printed no failure, yet each process
# demoted one batch of its 256-region exchange; the trace's M lines show what became of the others.
source tools/bench/device-call.sh c6
for run in radix:0 radix:1; do
  w=${run%%:*} i=${run#*:}
  [ "$SECONDS" -lt 200 ] || continue
  stage "$w adaptive $i"
  out=$R/$w-adaptive-$i; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_LOG=debug EMBER_SUITE_TRACE="$w-1.5-adaptive" EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive \
    EMBER_SUITE_ONLY=$w EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  grep -h -A1 'failed (CUresult\|could not enter' "$out"/logs/*.log | cut -c1-300
  gzip -f "$out"/logs/*.log
  pack
done
stage done
pack
records
for f in "$R"/*/diag/*.trace.gz; do echo "== $f"; zcat "$f" | grep '^M'; done
cat "$R/progress.log"
