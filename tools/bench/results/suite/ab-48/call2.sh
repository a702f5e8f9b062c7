#!/usr/bin/env bash
# Session 52, call 2. Pack with the tests (EMBER_PACK_TESTS unset); carry build-gpu. Every GPU test at
# 51fdbe1: a context's teardown now also ends its streams' work for gpu_busy and may begin a host phase,
# and runtime_prog's cudaDeviceReset goes through it.
source tools/bench/device-call.sh c48-2
stage "gpu tests"
(cd build && EMBER_GPU_TIMEOUT=60 timeout 300 ctest -L gpu --output-on-failure >"$R/gpu-tests.log" 2>&1)
grep -E "Test +#|tests passed|FAIL|warned" "$R/gpu-tests.log" | head -30
finish
