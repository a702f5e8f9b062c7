#!/usr/bin/env bash
# session 32, call 3, at the head (launch order's cycles, 50982e9): the GPU tests, then bfs at 1.5x static and
# adaptive, a process each in turn, untraced, as time allows (call 1's traced processes: adaptive 0.758 and
# 0.707 s against static's 0.677).
source tools/bench/device-call.sh c3
stage "gpu tests"
(cd build && LD_LIBRARY_PATH=$PWD/devlibs timeout 200 ctest -L gpu --output-on-failure >"$R/ctest-gpu.log" 2>&1)
tail -3 "$R/ctest-gpu.log"; pack
for v in static adaptive static adaptive; do
  time_left 120 || continue
  stage "bfs $v"
  out=$R/bfs-$v-$SECONDS; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=$v EMBER_SUITE_ONLY=bfs EMBER_SUITE_TIMEOUT=60 \
    timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  pack
done
stage done
pack
for f in "$R"/bfs-*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('d2h_bytes'), r.get('error'))
" "$f"
done
cat "$R/progress.log"
