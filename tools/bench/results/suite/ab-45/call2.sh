#!/usr/bin/env bash
# Call 1's second half (session 49): EMBER_PIECES=1 (`pieces`) against the defaults (`head`) on llama.cpp
# (two rounds, the order turning) and hf-llama, one library, adaptive at 1.5x of a 16 GiB budget.
# Pack with the llama.cpp build, EMBER_PACK_TESTS=0; carry build-gpu and .llama.
source tools/bench/device-call.sh c45-2
env_of() { case $1 in pieces) echo EMBER_PIECES=1 ;; *) echo EMBER_LOG=info ;; esac; }
cp build/lib-head.so build/lib-pieces.so
stage gguf
python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" /tmp/ember-13b.gguf 13b >"$R/gguf.log" 2>&1
for round in 0 1; do
  order="head pieces"; [ $round = 1 ] && order="pieces head"
  for v in $order; do time_left 200 && llama $v $round "$(env_of $v)"; done
done
for v in pieces head; do time_left 40 && hf $v 0 "$(env_of $v)"; done
finish
