#!/usr/bin/env bash
# Session 46, at the session's final code (the capture's end counted by the stream that began it,
# the probe's fork cases). Pack with the tests; carry build-gpu. The GPU tests (ctest -L gpu).
source tools/bench/device-call.sh c43-3
stage "gpu tests"
(cd build && EMBER_GPU_TIMEOUT=60 timeout 300 ctest -L gpu --output-on-failure >"$R/gpu-tests.log" 2>&1)
tail -20 "$R/gpu-tests.log"
finish
