#!/usr/bin/env bash
# Session 45, call 1's pack (base=618a23f prev=30c3d45, the llama.cpp build). capture_probe.py again,
# now warmed up on its side stream first (call 1's captures all failed plainly: cuBLAS's first use
# inside the capture), plainly, under the head and under prev; then llama.cpp head against base,
# two rounds of a process each in turn: whether the copy hooks cost token generation anything.
source tools/bench/device-call.sh c42-2
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
grep -h capture-probe "$R"/*.json
time_left 90 && { stage gguf; python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" /tmp/ember-13b.gguf 13b >"$R/gguf.log" 2>&1; }
for r in 0 1; do
  order="head base"; [ $r = 1 ] && order="base head"
  for v in $order; do time_left 40 && llama $v $r; done
done
finish
