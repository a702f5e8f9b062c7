#!/usr/bin/env bash
# Session 52, call 7. Pack with the tests (EMBER_PACK_TESTS unset); carry build-gpu. Every GPU test at the
# working tree of cuMemCreate memory past the budget made in host memory, the four past-budget tests new.
source tools/bench/device-call.sh c48-7
stage "gpu tests"
(cd build && EMBER_GPU_TIMEOUT=60 EMBER_GPU_VERBOSE=1 timeout 420 ctest -L gpu --output-on-failure -V >"$R/gpu-tests.log" 2>&1)
grep -E "Test +#|tests passed|FAIL|PASS" "$R/gpu-tests.log" | head -60
finish
