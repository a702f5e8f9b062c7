#!/usr/bin/env bash
# Session 45. Pack with EMBER_PACK_TESTS=0 EMBER_PACK_LIBS="base=618a23f prev=30c3d45" and the
# llama.cpp build; carry build-gpu and .llama.
# 1. ember-capture-probe, without Ember: which of the driver calls Ember makes invalidate a capture
#    under way, by capture mode, caller and the caller's own mode.
# 2. capture_probe.py (PyTorch's torch.cuda.graph, each capture held open 20 ms after a touch),
#    plainly, under the head (the worker relaxed, a hook's work relaxed while a capture is under
#    way) and under prev (30c3d45, before), global and thread-local: captures that failed.
# 3. Then as session 44's call 5: pathfinder's cells and BFS at the new defaults, llama.cpp head
#    against base (618a23f, before the copy hooks).
source tools/bench/device-call.sh c42-1
stage "capture probe"
timeout 60 build/bin/ember-capture-probe >"$R/capture-probe.jsonl" 2>"$R/capture-probe.log"
pack
for mode in global thread_local; do
  stage "torch plain $mode"
  timeout 120 python3 tools/bench/capture_probe.py --mode $mode >"$R/plain-$mode.json" 2>"$R/plain-$mode.log"
  for lib in head prev; do
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
cat "$R"/*.json
cell() { # workload scale variant round
  local out=$R/$1-$2-$3-$4
  stage "$1 $2 $3 round $4"
  mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=$2 EMBER_SUITE_VARIANTS=$3 \
    EMBER_SUITE_ONLY=$1 EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
for round in 0 1 2; do
  for scale in 1.5 0.5; do
    order="static adaptive"; [ $round = 1 ] && order="adaptive static"
    for v in $order; do time_left 150 && cell pathfinder $scale $v $round; done
  done
  time_left 140 && cell bfs 1.5 adaptive $round
done
finish
