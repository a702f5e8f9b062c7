#!/usr/bin/env bash
# Session 37, call 4, at b903257: traces for the next session of the two kernels the program's own hints
# placed better than Ember (call 3): radix (hints 0.510 s, adaptive 1.051) and kmeans (2.756 against
# 3.264), at 1.5x of a 16 GiB budget, adaptive and static, one process each, with EMBER_SUITE_TRACE
# (diag/*.trace.gz and their stats: which allocations each variant kept resident) and EMBER_LOG=debug
# (adaptive's notes of why regions gave way).
source tools/bench/device-call.sh c4
for w in radix kmeans; do
  for v in adaptive static; do
    [ "$SECONDS" -lt 300 ] || continue
    stage "$w $v traced"
    out=$R/$w-$v; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    EMBER_LOG=debug EMBER_SUITE_TRACE="$w-1.5-$v" EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=$v \
      EMBER_SUITE_ONLY=$w EMBER_SUITE_TIMEOUT=90 timeout 120 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
    gzip -f "$out"/logs/*.log 2>/dev/null
    pack
  done
done
stage done
pack
records
for f in "$R"/*/diag/*.stats.json; do
  python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))
print(sys.argv[1].split('/')[-1], [(a['id'], a['size'], a['bytes_promoted'], a['bytes_demoted']) for a in s.get('allocations', [])])
" "$f"
done
cat "$R/progress.log"
