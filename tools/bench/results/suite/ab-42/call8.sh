#!/usr/bin/env bash
# Session 45, at 7d407d5's code (gpu.capture_probe added). Pack with the
# tests; carry build-gpu. The GPU tests (ctest -L gpu).
source tools/bench/device-call.sh c42-8
stage "gpu tests"
(cd build && EMBER_GPU_TIMEOUT=60 timeout 240 ctest -L gpu --output-on-failure >"$R/gpu-tests.log" 2>&1)
tail -20 "$R/gpu-tests.log"
finish
