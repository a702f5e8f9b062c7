#!/usr/bin/env bash
# Session 44, after call 1: pathfinder's matrix cells under EMBER_READ_MOSTLY=1 (the default from this
# head on if call 1 shows no regression), static and adaptive at 0.5x and 1.5x of a 16 GiB budget,
# three rounds of a process each in turn, the order turning each round. Only an H200's records replace
# the matrix's. Pack with EMBER_PACK_TESTS=0; carry build-gpu.
source tools/bench/device-call.sh c41-2
cell() { # scale variant round
  local out=$R/pathfinder-$1-$2-$3
  stage "pathfinder $1 $2 round $3"
  mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_READ_MOSTLY=1 EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=$1 EMBER_SUITE_VARIANTS=$2 \
    EMBER_SUITE_ONLY=pathfinder EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
for round in 0 1 2; do
  for scale in 1.5 0.5; do
    order="static adaptive"; [ $round = 1 ] && order="adaptive static"
    for v in $order; do time_left 30 && cell $scale $v $round; done
  done
done
finish
