#!/usr/bin/env bash
# session 34, call 1, at 9a70af3. (1) ember-readmostly-probe (1 GiB): whether read
# duplication could bring a layer read once a token to the GPU faster than llama.cpp's kernels read it mapped
# (42-43 GB/s against a prefetch's 49-51), and give its room back for nothing: the duplicate's copy rate, its
# device memory, what a prefetch to the host of it costs and leaves, and a prefetch beside a kernel. (2) The
# adaptive records at 1.5x that predate 5183824 (touches of one cycle), hf-mixtral and hf-llama first, then
# the kernels bar bfs, one process each: on their recorded clocks the rule moves nothing for them.
source tools/bench/device-call.sh c1
stage "readmostly probe"
timeout 90 build/bin/ember-readmostly-probe $((1 << 30)) >"$R/readmostly-probe.json" 2>"$R/readmostly-probe.err"
echo "rc $?" >>"$R/readmostly-probe.err"
pack
stage "adaptive at 1.5x"
wall=$((440 - SECONDS))
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_TIMEOUT=60 \
  EMBER_SUITE_WALL=$wall EMBER_SUITE_ONLY="star nw cnn radix pathfinder kmeans" \
  timeout $((wall + 70)) bash tools/bench/suite.sh hf kernels >"$R/suite.log" 2>&1
stage done
pack
python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('first_seconds'), r.get('d2h_bytes'), r.get('error'))
" "$R/suite/suite.jsonl"
cat "$R/readmostly-probe.json" "$R/readmostly-probe.err" "$R/progress.log" "$R/suite/progress.log"
