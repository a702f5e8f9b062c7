#!/usr/bin/env bash
# Session 42, the first with a device since ab-39: calls 1 to 4 (prepared in sessions 40 and 41) regrouped.
# call6.sh came first (llama.cpp, the read-mostly probe, radix and pathfinder); this call has the rest.
# Adaptive at 1.5x of a 16 GiB budget, a process each in turn, the order turning each round.
# - call4's EMBER_READ_MOSTLY=1 (`dup`) against 0 (`head`) on star, two rounds.
# - call1's scan element sizes (head) against their parent (7af7afe, `base`; pack with
#   EMBER_PACK_LIBS=base=7af7afe) on bfs two rounds, and hf-llama a round (call6 had the first).
# - call2/3's EMBER_PARTIAL_RANK=1 (`rank`) against 0 (`head`) on cnn and star, two rounds each, and
#   hf-llama, two.
source tools/bench/device-call.sh c5
for v in rank dup; do cp build/lib-head.so build/lib-$v.so; done
env_of() { case $1 in rank) echo EMBER_PARTIAL_RANK=1 ;; dup) echo EMBER_READ_MOSTLY=1 ;; *) echo EMBER_LOG=info ;; esac; }
for round in 0 1; do
  order="dup head"; [ $round = 1 ] && order="head dup"
  for v in $order; do time_left 400 && { use $v; one "star-$v-$round" star EMBER_LOG=info "$(env_of $v)"; }; done
done
for round in 0 1; do
  order="head base"; [ $round = 1 ] && order="base head"
  for v in $order; do time_left 350 && { use $v; one "bfs-$v-$round" bfs EMBER_LOG=info; }; done
done
for w in cnn star; do
  for round in 0 1; do
    order="head rank"; [ $round = 1 ] && order="rank head"
    for v in $order; do time_left 300 && { use $v; one "$w-r-$v-$round" $w EMBER_LOG=info "$(env_of $v)"; }; done
  done
done
for v in base head; do time_left 200 && hf $v 1; done
for round in 0 1; do
  order="rank head"; [ $round = 1 ] && order="head rank"
  for v in $order; do time_left 40 && hf $v r$round "$(env_of $v)"; done
done
finish
