#!/usr/bin/env bash
# Prepared in session 47 (no device was lent), for the next session with one; not yet run.
# EMBER_PIECES=1 (`pieces`) against the defaults (`head`), one library, adaptive at 1.5x of a 16 GiB budget,
# a process each in turn, the order turning each round. Pack with the llama.cpp build, EMBER_PACK_TESTS=0;
# carry build-gpu and .llama. The replays (docs/findings.md, session 47) predict radix's input exchanged for
# its second key and value pair, and llama.cpp unmoved; partial rank, its forerunner, made pathfinder 14-25%
# slower on an H100, which no replay showed, so pathfinder comes first.
# - llama.cpp traced once under pieces: whether its fused gate is now credited 141 MB (the L lines of kernel
#   23's third argument), then three rounds of llama-bench;
# - pathfinder, radix, cnn and star, two rounds each; hf-llama as time allows.
source tools/bench/device-call.sh c44-1
cp build/lib-head.so build/lib-pieces.so
env_of() { case $1 in pieces) echo EMBER_PIECES=1 ;; *) echo EMBER_LOG=info ;; esac; }
turns 400 "head pieces" pathfinder radix
stage gguf
python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" /tmp/ember-13b.gguf 13b >"$R/gguf.log" 2>&1
use pieces; stage "llama traced"
EMBER_PIECES=1 GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 timeout 60 "$run" --driver real --mode adaptive --budget 16G \
  --trace "$R/llama-pieces-traced.trace" --stats "$R/llama-pieces-traced.stats.json" -- "$EMBER_LLAMA_BENCH" \
  -m /tmp/ember-13b.gguf -p 0 -n 8 -r 1 -o jsonl -ngl 99 >"$R/llama-pieces-traced.jsonl" 2>"$R/llama-pieces-traced.log"
gzip -f "$R/llama-pieces-traced.trace"
pack
for round in 0 1 2; do
  order="head pieces"; [ $round = 1 ] && order="pieces head"
  for v in $order; do time_left 250 && llama $v $round "$(env_of $v)"; done
done
turns 120 "pieces head" cnn star
for round in 0 1; do
  order="head pieces"; [ $round = 1 ] && order="pieces head"
  for v in $order; do time_left 40 && hf $v $round "$(env_of $v)"; done
done
finish
