#!/usr/bin/env bash
# Session 38, call 3, at try/episode: the exchange at a host phase (EMBER_PHASE_EXCHANGE=1, the branch's
# default) against the same library with it off (=0, the head's behaviour), adaptive at 1.5x of a 16 GiB
# budget, a process each in turn, the order turning each round, EMBER_LOG=debug for both: the seven
# kernels whose runs end in a host phase (the check). Then llama.cpp 13B F16 once, llama-bench run
# directly with EMBER_LOG=debug: whether token generation sees any host phase at all.
source tools/bench/device-call.sh c3
one() { # FOLDER WORKLOAD PHASE_EXCHANGE
  local dir=$1 w=$2 pe=$3
  stage "$dir"
  out=$R/$dir; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_PHASE_EXCHANGE=$pe EMBER_LOG=debug EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive \
    EMBER_SUITE_ONLY=$w EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
for round in 0 1; do
  for w in star radix bfs cnn pathfinder nw kmeans; do
    order="1 0"; [ $round = 1 ] && order="0 1"
    for pe in $order; do
      time_left 75 || continue
      one "$w-pe$pe-$round" "$w" "$pe"
    done
  done
done
if time_left 50; then
  stage "llama.cpp"
  python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" /tmp/ember-13b.gguf 13b >"$R/gguf.log" 2>&1
  GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 timeout 60 "$run" --driver real --mode adaptive --budget 16G --stats "$R/llama-pe1.stats.json" \
    --log debug -- "$EMBER_LLAMA_BENCH" -m /tmp/ember-13b.gguf -p 0 -n 8 -r 3 -o jsonl -ngl 99 >"$R/llama-pe1.jsonl" 2>"$R/llama-pe1.log"
  grep -c "host phase" "$R/llama-pe1.log"
  gzip -f "$R/llama-pe1.log"
fi
stage done
pack
records | sort
llama_runs
cat "$R/progress.log"
