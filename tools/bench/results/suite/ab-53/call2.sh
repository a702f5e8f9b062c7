#!/usr/bin/env bash
# Session 57, call 2, at the head with EMBER_SPLIT_VMM on by default (shareable allocations under a 64th of the budget kept whole). Pack with EMBER_PACK_TESTS=gpu and
# EMBER_PACK_KEEP=ember-suite; carry build-gpu. 1. every GPU test at the defaults; 2. on an H200 (the
# matrix's card) only, bitonic at 1.5x under mapped, the matrix's last cell not run.
source tools/bench/device-call.sh c53-2
stage "gpu tests at the defaults"
(cd build && EMBER_GPU_TIMEOUT=60 EMBER_GPU_VERBOSE=1 timeout 280 ctest -L gpu --output-on-failure -V \
  >"$R/gpu-tests.log" 2>&1)
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|split|peak" "$R/gpu-tests.log" | head -30
pack
grep -q H200 "$R/gpu.txt" && time_left 100 && cell bitonic 1.5 mapped 0 $((call_seconds - SECONDS - 50))
finish
