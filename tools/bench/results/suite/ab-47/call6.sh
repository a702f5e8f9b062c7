#!/usr/bin/env bash
# Session 51, call 6. Pack with the tests (EMBER_PACK_TESTS unset); carry build-gpu. Every GPU test at
# the session's head: after the teardown also forgets kernels and graph executables, ends captures and waits for Ember's moves (d6300bb; call 4 ran at f363c35)
# every framework's exit goes through it.
source tools/bench/device-call.sh c47-6
stage "gpu tests"
(cd build && EMBER_GPU_TIMEOUT=60 timeout 300 ctest -L gpu --output-on-failure >"$R/gpu-tests.log" 2>&1)
grep -E "Test +#|tests passed|FAIL|warned" "$R/gpu-tests.log" | head -30
finish
