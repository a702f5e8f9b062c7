#!/usr/bin/env bash
# Session 51, call 4. Pack with the tests (EMBER_PACK_TESTS unset); carry build-gpu. Every GPU test at
# the session's head: with the first forms of the context teardown hooked (call 2 ran only the runtime
# tests and torch_manage_all), CuPy's and JAX's exits now go through the teardown's bookkeeping too.
source tools/bench/device-call.sh c47-4
stage "gpu tests"
(cd build && EMBER_GPU_TIMEOUT=60 timeout 300 ctest -L gpu --output-on-failure >"$R/gpu-tests.log" 2>&1)
grep -E "Test +#|tests passed|FAIL|warned" "$R/gpu-tests.log" | head -30
finish
