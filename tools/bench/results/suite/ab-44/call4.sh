#!/usr/bin/env bash
# Session 48, after calls 1 and 3 (an H100). Call 1 found EMBER_PIECES exchanging radix's input in its second
# run (third run 0.65 s against 1.23 at the defaults) but cnn's third run 5% slower (0.87 GiB demoted against
# 0.17-0.31 at the defaults), and pathfinder's second round 0.329 against 0.296. Here, head against pieces, one
# library, adaptive at 1.5x of a 16 GiB budget, a process each in turn, the order turning:
# - cnn and radix with five runs a process (EMBER_BENCH_RUNS=5): whether pieces' late moves pay off or churn;
#   traced (EMBER_SUITE_TRACE), so that ember-sim can replay what the GPU did;
# - pathfinder, three runs, two more rounds;
# - on an H200 only, call 2's bitonic 1.5x mapped (the matrix's one cell never measured), as time allows.
# Pack with EMBER_PACK_TESTS=0; carry build-gpu.
source tools/bench/device-call.sh c44-4
cp build/lib-head.so build/lib-pieces.so
env_of() { case $1 in pieces) echo EMBER_PIECES=1 ;; *) echo EMBER_LOG=info ;; esac; }
for w in cnn radix; do
  for round in 0 1; do
    order="head pieces"; [ $round = 1 ] && order="pieces head"
    for v in $order; do
      time_left 200 || continue
      trace=; [ $round = 0 ] && trace=$w-1.5-adaptive
      use $v; one "$w-$v-$round" $w EMBER_LOG=info EMBER_BENCH_RUNS=5 EMBER_SUITE_TRACE=$trace "$(env_of $v)"
      gzip -f "$R/$w-$v-$round"/diag/*.trace 2>/dev/null; pack
    done
  done
done
turns 180 "pieces head" pathfinder
if grep -q H200 "$R/gpu.txt" && time_left 120; then
  use head; out=$R/bitonic-mapped && mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  stage "bitonic 1.5 mapped"
  EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=mapped EMBER_SUITE_ONLY=bitonic \
    EMBER_SUITE_TIMEOUT=240 timeout $((call_seconds - SECONDS)) bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
fi
finish
