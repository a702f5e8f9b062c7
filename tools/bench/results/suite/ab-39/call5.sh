#!/usr/bin/env bash
# Session 39, call 5: the pass looks past hot regions covered in part, and past one makes exchanges only
# (policy.c, bb89d28, as `head`), against `main` (6e352e7), a process each in
# turn, the order turning each round, adaptive at 1.5x of a 16 GiB budget: llama.cpp 13B F16 by
# llama-bench directly (three rounds: its packed tensors share regions), hf-llama (two rounds; call 4's
# one process each differed by 10%), radix and cnn (one round).
source tools/bench/device-call.sh c5
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
llama() { # VARIANT ROUND
  use $1; stage "llama-$1-$2"
  GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 timeout 60 "$run" --driver real --mode adaptive --budget 16G \
    --stats "$R/llama-$1-$2.stats.json" --log info -- "$EMBER_LLAMA_BENCH" -m /tmp/ember-13b.gguf -p 0 -n 8 -r 3 \
    -o jsonl -ngl 99 >"$R/llama-$1-$2.jsonl" 2>"$R/llama-$1-$2.log"
  pack
}
hf() { # VARIANT ROUND
  use $1; stage "hf-llama-$1-$2"
  out=$R/hf-llama-$1-$2; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_SKIP="hf-mixtral-*" \
    EMBER_SUITE_TIMEOUT=90 timeout $((560 - SECONDS)) bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
stage gguf
python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" /tmp/ember-13b.gguf 13b >"$R/gguf.log" 2>&1
for round in 0 1 2; do
  order="head main"; [ $round = 1 ] && order="main head"
  for v in $order; do time_left 300 && llama $v $round; done
done
for round in 0 1; do
  order="head main"; [ $round = 1 ] && order="main head"
  for v in $order; do time_left 110 && hf $v $round; done
done
for w in radix cnn; do
  for v in main head; do time_left 20 && { use $v; one "$w-$v-0" "$w" EMBER_LOG=info; }; done
done
use head
stage done
pack
records | sort
llama_runs
cat "$R/progress.log"
