#!/usr/bin/env bash
# Session 54, call 4: the GPU tests call 3 left out, with EMBER_KEEP_FREED=2% in the environment.
# Pack with EMBER_PACK_TESTS=gpu; carry build-gpu; run with EMBER_CALL_SECONDS=170.
source tools/bench/device-call.sh c50-4
stage "gpu tests"
(cd build && EMBER_KEEP_FREED=2% EMBER_GPU_TIMEOUT=60 EMBER_GPU_VERBOSE=1 timeout 160 ctest -L gpu \
  -E 'keep_freed|async|gpu.torch$|torch_manage_all' --output-on-failure -V >"$R/gpu-tests.log" 2>&1)
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout" "$R/gpu-tests.log" | head -30
finish
