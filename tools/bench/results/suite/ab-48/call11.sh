#!/usr/bin/env bash
# Session 52, call 11. Pack with the tests (EMBER_PACK_TESTS unset), then drop the unit tests, the probes and the libraries only they need, by hand (the tree had grown past what a call carries; EMBER_PACK_TESTS=gpu does it now); carry build-gpu. Every GPU test at the
# working tree of cuMemCreate memory past the budget made in host memory, the six past-budget tests (pool allocations converted: CuPy's async pool, JAX's cuda_async allocator).
source tools/bench/device-call.sh c48-11
stage "gpu tests"
(cd build && EMBER_GPU_TIMEOUT=60 EMBER_GPU_VERBOSE=1 timeout 480 ctest -L gpu --output-on-failure -V >"$R/gpu-tests.log" 2>&1)
grep -E "Test +#|tests passed|FAIL|PASS" "$R/gpu-tests.log" | head -60
finish
