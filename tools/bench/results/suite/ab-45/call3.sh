#!/usr/bin/env bash
# Session 48 prepared call 1 (everything below); session 49 split it in two for a llama.cpp build not yet
# made, then ran the two as this one call when starts were scarce, the order by what decides EMBER_PIECES:
# cnn and radix (five runs a process, traced in the first round), llama.cpp's two rounds, then star,
# pathfinder, bfs, nw and kmeans while time is left, hf-llama last. EMBER_PIECES=1 (`pieces`) against the
# defaults (`head`), one library, adaptive at 1.5x of a 16 GiB budget, a process each in turn, the order
# turning each round. Pack with the llama.cpp build, EMBER_PACK_TESTS=0; carry build-gpu and .llama.
source tools/bench/device-call.sh c45-3
env_of() { # VARIANT [ROUND WORKLOAD]
  case $1 in pieces) printf EMBER_PIECES=1 ;; *) printf EMBER_LOG=info ;; esac
  case ${3:-} in cnn|radix)
    printf ' EMBER_BENCH_RUNS=5'
    [ "$2" = 0 ] && printf ' EMBER_SUITE_TRACE=%s-1.5-adaptive' "$3" ;;
  esac
  echo
}
cp build/lib-head.so build/lib-pieces.so
turns 300 "head pieces" cnn radix
stage gguf
python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" /tmp/ember-13b.gguf 13b >"$R/gguf.log" 2>&1
for round in 0 1; do
  order="head pieces"; [ $round = 1 ] && order="pieces head"
  for v in $order; do time_left 150 && llama $v $round "$(env_of $v)"; done
done
turns 200 "pieces head" star pathfinder bfs nw kmeans
for v in pieces head; do time_left 100 && hf $v 0 "$(env_of $v)"; done
finish
