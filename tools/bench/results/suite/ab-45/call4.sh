#!/usr/bin/env bash
# Call 3's hf-llama again, the order turned (head first, then pieces), and a third round of cnn: one process
# each had hf-llama 3% slower under EMBER_PIECES, within what its processes vary by. Carry build-gpu.
source tools/bench/device-call.sh c45-4
env_of() { case $1 in pieces) printf EMBER_PIECES=1 ;; *) printf EMBER_LOG=info ;; esac; [ "${3:-}" = cnn ] && printf ' EMBER_BENCH_RUNS=5'; echo; }
cp build/lib-head.so build/lib-pieces.so
for v in head pieces; do time_left 30 && hf $v 1 "$(env_of $v)"; done
for v in pieces head; do time_left 20 && { use $v; one "cnn-$v-2" cnn EMBER_LOG=info $(env_of $v 2 cnn); }; done
for v in pieces head; do time_left 30 && hf $v 2 "$(env_of $v)"; done
finish
