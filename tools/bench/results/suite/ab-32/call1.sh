#!/usr/bin/env bash
# session 32, call 1, at the head. (1) ember-rows-probe: what a matrix-vector product of llama.cpp's shape
# (10 KiB rows of halves, a block a row) draws from mapped memory against the sparse probe's stream, over
# host pages made by 16 threads, by one, by a prefetch to the host, and mapped on fault: llama.cpp's kernels
# read mapped weights at some 42 GB/s and PyTorch's at 40-41, against the stream's 51; is it the kernels'
# shape or the host backing? (2) bfs at 1.5x, traced with EMBER_LOG=debug: adaptive (two processes) demoted
# 0.75-2 GiB in ab-31's call 2 and ran 0.953 of static, where the recorded trace in diag replays with no
# demotion: what the worker demoted, and why. (3) llama.cpp at 1.5x under adaptive, traced with
# EMBER_LOG=debug, one process: its three processes in ab-31's call 3 demoted 2.5-3.7 GiB, the fastest
# (1.71 s per 8 tokens against 1.87) the least.
source tools/bench/device-call.sh c1
stage "rows probe"
timeout 150 build/bin/ember-rows-probe $((4 << 30)) >"$R/rows-probe.json" 2>"$R/rows-probe.err"
echo "rc $?" >>"$R/rows-probe.err"
pack
for v in adaptive static adaptive; do
  time_left 200 || continue
  stage "bfs $v"
  out=$R/bfs-$v-$SECONDS; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_LOG=debug EMBER_SUITE_TRACE="bfs-1.5-$v" EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 \
    EMBER_SUITE_VARIANTS=$v EMBER_SUITE_ONLY=bfs EMBER_SUITE_TIMEOUT=60 timeout 90 \
    bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  pack
done
if time_left 150; then
  stage "llama adaptive"
  out=$R/llama; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_LOG=debug EMBER_SUITE_TRACE="llama-cpp-1.5-adaptive" EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 \
    EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_TIMEOUT=90 timeout $((520 - SECONDS)) \
    bash tools/bench/suite.sh llama >"$out/suite.log" 2>&1
fi
stage done
pack
cat "$R/rows-probe.err"
for f in "$R"/*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('d2h_bytes'), r.get('error'))
" "$f"
done
grep -h "at exit" "$R"/*/logs/*.log | cut -c1-200
cat "$R/progress.log"
