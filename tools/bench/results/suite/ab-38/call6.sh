#!/usr/bin/env bash
# Session 38, call 6, at 3a7c7bc (the host phase's exchange tried at each pass while the phase lasts, the
# room filled on the first try only): star at 1.5x of a 16 GiB budget under adaptive, three processes, for
# the record at the final code; bfs, pathfinder, radix and cnn once each, as a check that nothing else
# moved; star once more with EMBER_LOG=debug.
source tools/bench/device-call.sh c6
one() { # FOLDER WORKLOAD [ENV...]
  local dir=$1 w=$2; shift 2
  stage "$dir"
  out=$R/$dir; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  env "$@" EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive \
    EMBER_SUITE_ONLY=$w EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
for k in 0 1 2; do time_left 100 && one "star-$k" star EMBER_LOG=info; done
for w in bfs pathfinder radix cnn; do time_left 60 && one "$w-0" "$w" EMBER_LOG=info; done
time_left 30 && one star-debug star EMBER_LOG=debug
stage done
pack
records | sort
for f in "$R"/*/logs/*.log.gz; do echo "$f: $(zcat "$f" | grep -c 'exchanged at a host phase') exchange lines"; done
cat "$R/progress.log"
