#!/usr/bin/env bash
# Session 37, call 8: the hot regions' order ranking a region that launches covered only in part at half
# its demand ("rank", the working tree on 334df2f) against 334df2f ("head"), under adaptive at 1.5x of a
# 16 GiB budget, a process each in turn, the order turning each round. radix (calls 6 and 7: no move
# within its runs; the chunk edges of its passes, credited twice, came first among the hot regions and
# ended every pass; replayed on its recorded clock, "rank" exchanges the input out in the second run),
# then llama.cpp 13B F16 by llama-bench directly (its replays demote more under "rank" and run 6-10%
# faster in the model), then cnn.
source tools/bench/device-call.sh c8
use() { cp "build/lib-$1.so" build/lib/libember.so; }
cp build/lib/libember.so build/lib-rank.so
kernel() { # workload variant round
  use "$2"
  local out=$R/$1-$2-$3
  mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  stage "$1 $2 $3"
  EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_ONLY=$1 EMBER_SUITE_TIMEOUT=60 \
    timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  pack
}
for round in 0 1 2; do
  order=(head rank); [ $((round % 2)) = 1 ] && order=(rank head)
  for v in "${order[@]}"; do kernel radix "$v" "$round"; done
done
model=/tmp/ember-13b.gguf
stage "writing the model"
python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" "$model" 13b >"$R/gguf.log" 2>&1
bench=("$EMBER_LLAMA_BENCH" -m "$model" -p 0 -n 8 -r 3 -o jsonl -ngl 99)
for round in 0 1 2; do
  order=(rank head); [ $((round % 2)) = 1 ] && order=(head rank)
  for v in "${order[@]}"; do
    [ "$SECONDS" -lt 230 ] || continue
    use "$v"
    out=$R/llama-$v-$round
    stage "llama $v $round"
    GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 timeout 60 "$run" --driver real --mode adaptive --budget 16G \
      --stats "$out.stats.json" --log info -- "${bench[@]}" >"$out.jsonl" 2>"$out.err"
    echo "rc $?" >>"$out.err"
    pack
  done
done
rm -f "$model"
for round in 0 1; do
  order=(head rank); [ $((round % 2)) = 1 ] && order=(rank head)
  for v in "${order[@]}"; do [ "$SECONDS" -lt 270 ] && kernel cnn "$v" "$round"; done
done
use rank
stage done
pack
records
llama_runs
cat "$R/progress.log"
