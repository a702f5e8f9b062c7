#!/usr/bin/env bash
# Session 56, call 1, at the head (session 55's kept-list fixes and the hooks_memory.c split, never yet
# on a GPU). Pack with EMBER_PACK_TESTS=gpu; carry build-gpu. 1. every GPU test at the defaults;
# 2. on an H200 (the matrix's card) only: the cells ab-51/call5.sh owed, the hf cells at 1.5x (resident
# and adaptive) and bitonic at 1.5x under mapped, while time is left.
source tools/bench/device-call.sh c52-1
stage "gpu tests at the defaults"
(cd build && EMBER_GPU_TIMEOUT=60 EMBER_GPU_VERBOSE=1 timeout 250 ctest -L gpu --output-on-failure -V \
  >"$R/gpu-tests.log" 2>&1)
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|kept freed memory" "$R/gpu-tests.log" | head -30
pack
grep -q H200 "$R/gpu.txt" || { finish; exit 0; }
if time_left 250; then
  out=$R/hf && mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  stage "hf at 1.5x, resident and adaptive"
  EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS="resident adaptive" \
    EMBER_SUITE_TIMEOUT=90 timeout $((call_seconds - SECONDS - 20)) bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
fi
if time_left 100; then
  out=$R/bitonic-mapped && mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  stage "bitonic 1.5 mapped"
  EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=mapped EMBER_SUITE_ONLY=bitonic \
    EMBER_SUITE_TIMEOUT=$((call_seconds - SECONDS - 40)) timeout $((call_seconds - SECONDS - 20)) \
    bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
fi
finish
