#!/usr/bin/env bash
# Session 44, at the new defaults (read-mostly on, copies hooked), with what device time is left. Pack
# with EMBER_PACK_TESTS=0 EMBER_PACK_LIBS=base=618a23f and the llama.cpp build; carry build-gpu and .llama.
# - pathfinder's matrix cells, static and adaptive at 0.5x and 1.5x of a 16 GiB budget, three rounds of
#   a process each in turn (only an H200's replace the matrix's records);
# - BFS adaptive at 1.5x, three processes;
# - llama.cpp (13B F16, llama-bench -n 8 -r 3) under the head and base, a process each in turn: whether
#   the copy hooks cost token generation anything.
source tools/bench/device-call.sh c41-5
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
time_left 90 && { stage gguf; python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" /tmp/ember-13b.gguf 13b >"$R/gguf.log" 2>&1; }
for r in 0 1; do
  order="head base"; [ $r = 1 ] && order="base head"
  for v in $order; do time_left 20 && llama $v $r; done
done
finish
