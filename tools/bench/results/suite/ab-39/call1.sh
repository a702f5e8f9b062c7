#!/usr/bin/env bash
# Session 39, call 1, try/placed-spread: whether the mapped share spread through every array (2 MiB pieces
# of each counted array in even steps, SUITE_SPREAD=interleave in the program's own hints) beats the hints'
# busiest-arrays-first split, which maps whole arrays: in cnn every layer would then overlap its mapped
# traffic with its compute, where now three layers run with the link idle. cnn against Ember's adaptive in
# turn, two rounds; kmeans, nw, pathfinder, radix and bfs once each, both splits. 1.5x of a 16 GiB budget.
source tools/bench/device-call.sh c1
one() { # FOLDER WORKLOAD VARIANT [ENV...]
  local dir=$1 w=$2 v=$3; shift 3
  stage "$dir"
  out=$R/$dir; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  env "$@" EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=$v \
    EMBER_SUITE_ONLY=$w EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
for k in 0 1; do
  time_left 90 && one "cnn-spread-$k" cnn hints SUITE_SPREAD=interleave
  time_left 90 && one "cnn-hints-$k" cnn hints
  time_left 90 && one "cnn-adaptive-$k" cnn adaptive
done
for w in kmeans pathfinder nw radix bfs; do
  time_left 70 && one "$w-spread" "$w" hints SUITE_SPREAD=interleave
  time_left 70 && one "$w-hints" "$w" hints
done
stage done
pack
records | sort
cat "$R/progress.log"
