#!/usr/bin/env bash
# Session 46, at d66a0cf, on the H200 that call 6 found. Pack with EMBER_PACK_TESTS=0; carry build-gpu.
# The matrix's stale cells: pathfinder static and adaptive at 1.5x and 0.5x, three rounds of a process
# each, the order turning; then bench: launch-overhead at the defaults, three rounds.
source tools/bench/device-call.sh c43-7
cell() { # workload scale variant round
  local out=$R/$1-$2-$3-$4
  stage "$1 $2 $3 round $4"
  mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=$2 EMBER_SUITE_VARIANTS=$3 \
    EMBER_SUITE_ONLY=$1 EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
for round in 0 1 2; do
  for scale in 1.5 0.5; do
    order="static adaptive"; [ $round = 1 ] && order="adaptive static"
    for v in $order; do time_left 100 && cell pathfinder $scale $v $round; done
  done
done
time_left 90 && { stage "launch overhead"; mkdir -p "$R/overhead/logs" && cp "$R"/suite/*probe.json "$R/overhead/";
  EMBER_RESULTS=$R/overhead EMBER_OVERHEAD_ROUNDS=3 timeout 120 bash tools/bench/suite.sh overhead >"$R/overhead/suite.log" 2>&1; pack; }
finish
