#!/usr/bin/env bash
# Session 38, call 1, at 14b2aa7: where pathfinder's run after the host's check (0.33-0.39 s against the
# third run's 0.21) and star's exchanging second run (0.56-0.59 s against the third's 0.30) spend their
# time, at 1.5x of a 16 GiB budget under adaptive: each traced (EMBER_SUITE_TRACE) with EMBER_LOG=debug,
# and pathfinder once more with refreshes off (EMBER_REFRESH_FAULTS=0).
source tools/bench/device-call.sh c1
one() { # NAME WORKLOAD [ENV...]
  local name=$1 w=$2; shift 2
  stage "$name"
  out=$R/$name; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  env "$@" EMBER_SUITE_TRACE="$w-1.5-adaptive" EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive \
    EMBER_SUITE_ONLY=$w EMBER_SUITE_TIMEOUT=90 timeout 120 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
one pf-debug pathfinder EMBER_LOG=debug
one pf-norefresh pathfinder EMBER_REFRESH_FAULTS=0
one star-debug star EMBER_LOG=debug
one pf-plain pathfinder EMBER_LOG=info
stage done
pack
records
cat "$R/progress.log"
