#!/usr/bin/env bash
# Session 45, at the head with the capture fix (the worker in relaxed capture mode, a launch hook's
# work relaxed while a capture is under way). Pack with the tests (EMBER_PACK_TESTS unset); carry
# build-gpu.
# - the GPU tests (ctest -L gpu), gpu.torch_graph_capture among them;
# - bench: launch-overhead at the new defaults (read-mostly on, copies hooked; the launch path's
#   one atomic load per pointer argument), three rounds of the variants interleaved.
source tools/bench/device-call.sh c42-3
stage "gpu tests"
(cd build && EMBER_GPU_TIMEOUT=60 timeout 200 ctest -L gpu --output-on-failure >"$R/gpu-tests.log" 2>&1)
tail -15 "$R/gpu-tests.log"
pack
time_left 200 && { stage "launch overhead"; mkdir -p "$R/overhead/logs" && cp "$R"/suite/*probe.json "$R/overhead/";
  EMBER_RESULTS=$R/overhead EMBER_OVERHEAD_ROUNDS=3 timeout 300 bash tools/bench/suite.sh overhead >"$R/overhead/suite.log" 2>&1; pack; }
finish
