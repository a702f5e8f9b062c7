#!/usr/bin/env bash
# Prepared in session 48 (its device time spent), for the next session with a GPU; not yet run.
# EMBER_PIECES=1 (`pieces`) against the defaults (`head`), one library at 06340a5 or later (the per-cycle
# exchange needs the hot region referenced EMBER_HEAT_RATIO times as often), adaptive at 1.5x of a 16 GiB
# budget, a process each in turn, the order turning each round. At b357850, on an H100 (ab-44's calls 1 and
# 4), pieces ran radix 1.9x faster from its third run and cnn 5% slower; replayed, the new rule keeps radix's
# exchange and removes cnn's. So cnn first, then radix, five runs a process, traced in the first round; then
# the workloads the rule could touch at the defaults too: star (its exchange), pathfinder, bfs, kmeans, nw;
# llama.cpp and hf-llama are call 2's (session 49 split the call: its llama.cpp build was not ready).
# Pack with EMBER_PACK_TESTS=0; carry build-gpu.
source tools/bench/device-call.sh c45-1
env_of() { # VARIANT [ROUND WORKLOAD]: cnn and radix five runs a process, traced in the first round
  case $1 in pieces) printf EMBER_PIECES=1 ;; *) printf EMBER_LOG=info ;; esac
  case ${3:-} in cnn|radix)
    printf ' EMBER_BENCH_RUNS=5'
    [ "$2" = 0 ] && printf ' EMBER_SUITE_TRACE=%s-1.5-adaptive' "$3" ;;
  esac
  echo
}
cp build/lib-head.so build/lib-pieces.so
turns 240 "head pieces" cnn radix
turns 40 "pieces head" star pathfinder bfs nw kmeans
finish
