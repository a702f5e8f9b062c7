#!/usr/bin/env bash
# Session 58, call 2: call 1 cut to what the session's last device time allows (its starts kept
# failing). Pack with EMBER_PACK_TESTS=gpu; carry build-gpu. 1. the PyTorch GPU tests at the defaults
# (torch_prog.py now checks memory_allocated(), which reads the pools' usage attributes under
# backend:cudaMallocAsync); 2. on an H200 only, token generation at 1.5x under resident, static and
# adaptive, a process each (the matrix's H200 records of it predate session 50's background touches).
export EMBER_CALL_SECONDS=${EMBER_CALL_SECONDS:-420}
source tools/bench/device-call.sh c54-2
stage "the PyTorch gpu tests at the defaults"
(cd build && EMBER_GPU_TIMEOUT=60 EMBER_GPU_VERBOSE=1 timeout 150 ctest -L gpu -R torch --output-on-failure -V \
  >"$R/gpu-tests.log" 2>&1)
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|memory_allocated" "$R/gpu-tests.log" | head -30
pack
if grep -q H200 "$R/gpu.txt" && time_left 150; then
  out=$R/hf && mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  stage "hf at 1.5x, resident, static and adaptive"
  EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS="resident static adaptive" \
    EMBER_SUITE_TIMEOUT=90 timeout $((call_seconds - SECONDS - 20)) bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
fi
finish
