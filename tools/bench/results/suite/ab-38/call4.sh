#!/usr/bin/env bash
# Session 38, call 4: d632657 (the exchange at a host phase, merged) against its parent 14b2aa7, a process
# each in turn, the order turning each round, adaptive at 1.5x of a 16 GiB budget: star (three rounds,
# then one traced process of d632657 for the replays: its trace has Q lines), bfs (three rounds), and
# llama.cpp 13B F16 by llama-bench directly (three rounds: token generation has no host phase the worker
# sees, so this checks the bookkeeping costs nothing).
source tools/bench/device-call.sh c4
cp build/lib/libember.so build/lib-head.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
one() { # FOLDER WORKLOAD [ENV...]
  local dir=$1 w=$2; shift 2
  stage "$dir"
  out=$R/$dir; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  env "$@" EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive \
    EMBER_SUITE_ONLY=$w EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
for round in 0 1 2; do
  for w in star bfs; do
    order="head main"; [ $round = 1 ] && order="main head"
    for v in $order; do
      time_left 150 || continue
      use $v; one "$w-$v-$round" "$w" EMBER_LOG=info
    done
  done
done
use head
time_left 140 && one star-head-traced star EMBER_LOG=debug EMBER_SUITE_TRACE=star-1.5-adaptive
if time_left 100; then
  stage "gguf"
  python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" /tmp/ember-13b.gguf 13b >"$R/gguf.log" 2>&1
  for round in 0 1 2; do
    order="head main"; [ $round = 1 ] && order="main head"
    for v in $order; do
      time_left 25 || continue
      use $v; stage "llama-$v-$round"
      GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 timeout 60 "$run" --driver real --mode adaptive --budget 16G \
        --stats "$R/llama-$v-$round.stats.json" --log info -- "$EMBER_LLAMA_BENCH" -m /tmp/ember-13b.gguf -p 0 -n 8 -r 3 \
        -o jsonl -ngl 99 >"$R/llama-$v-$round.jsonl" 2>"$R/llama-$v-$round.log"
      pack
    done
  done
fi
use head
stage done
pack
records | sort
llama_runs
cat "$R/progress.log"
