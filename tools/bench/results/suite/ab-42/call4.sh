#!/usr/bin/env bash
# Session 45. Pack with EMBER_PACK_TESTS=0 EMBER_PACK_LIBS="prev=30c3d45 mid=76a3826"; carry build-gpu.
# capture_probe.py with PyTorch's cudaMallocAsync backend, whose allocations inside a capture are the
# graph's own nodes: plainly, under the head (4b64049: such an allocation left to the graph), mid
# (76a3826: the worker relaxed, the allocation converted) and prev (30c3d45), adaptive, manage-all,
# a 2 GiB budget, in global and thread-local modes.
source tools/bench/device-call.sh c42-4
export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
for mode in global thread_local; do
  stage "torch plain $mode"
  timeout 120 python3 tools/bench/capture_probe.py --mode $mode >"$R/plain-$mode.json" 2>"$R/plain-$mode.log"
  for lib in head mid prev; do
    use $lib
    stage "torch $lib $mode"
    EMBER_MANAGE_ALL=1 timeout 120 "$run" --driver real --mode adaptive --budget 2G --log debug \
      --stats "$R/$lib-$mode.stats.json" -- python3 tools/bench/capture_probe.py --mode $mode \
      >"$R/$lib-$mode.json" 2>"$R/$lib-$mode.log"
    gzip -f "$R/$lib-$mode.log"
  done
  use head
  pack
done
for f in "$R"/*.json; do echo "$(basename "$f"): $(grep -h capture-probe "$f")"; done
finish
