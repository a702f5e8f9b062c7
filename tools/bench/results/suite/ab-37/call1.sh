#!/usr/bin/env bash
# Session 37, call 1: llama.cpp 13B F16 at a 16 GiB budget (1.5x) under adaptive, llama-bench run
# directly (the model written once), a process per variant per round, the order turning each round:
#   old  570b8f7, the library of ab-36's calls (1.648 s per 8 tokens through the harness)
#   head main at 5f6379b: a graph's kept scans take what launches taught (0031e3a; ab-36 call 4
#        measured nothing because they did not), the pool's base is a piece (eb80af3) and the
#        replay's promotion sorts lazily (09e24a6, 0.85 -> 0.52 ms a token in ember-callbench --graph)
#   glf  try/graph-launch-first on the head: past a graph's first replay, cuGraphLaunch goes to the
#        driver first and the scans replay while the GPU runs
# Then static under head, two processes, for adaptive against static in the same call, and
# hf-llama (no graphs) head against glf through the harness as a check that nothing else moved.
source tools/bench/device-call.sh c1
use() { cp "build/lib-$1.so" build/lib/libember.so; }
cp build/lib/libember.so build/lib-head.so
model=/tmp/ember-13b.gguf
stage "writing the model"
python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" "$model" 13b >"$R/gguf.log" 2>&1
bench=("$EMBER_LLAMA_BENCH" -m "$model" -p 0 -n 8 -r 3 -o jsonl -ngl 99)
llama() { # variant mode tag
  use "$1"
  local out=$R/llama-$1-$2-$3
  stage "llama $1 $2 $3"
  GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 timeout 120 "$run" --driver real --mode "$2" --budget 16G \
    --stats "$out.stats.json" --log info -- "${bench[@]}" >"$out.jsonl" 2>"$out.err"
  echo "rc $?" >>"$out.err"
  pack
}
orders=("old head glf" "glf old head" "head glf old" "old glf head" "glf head old" "head old glf")
for round in 0 1 2 3 4 5; do
  for v in ${orders[$round]}; do
    [ "$SECONDS" -lt 330 ] || continue
    llama "$v" adaptive "$round"
  done
done
for round in 0 1; do
  [ "$SECONDS" -lt 390 ] || continue
  llama head static "$round"
done
rm -f "$model"
for v in head glf; do
  [ "$SECONDS" -lt 470 ] || continue
  use "$v"
  stage "hf-llama $v"
  out=$R/hf-$v-0; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_SKIP="hf-mixtral-*" \
    EMBER_SUITE_TIMEOUT=90 timeout $((560 - SECONDS)) bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
  pack
done
use head
stage done
pack
llama_runs
records
cat "$R/progress.log"
