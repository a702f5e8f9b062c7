#!/usr/bin/env bash
# Prepared in session 41, when no device was lent; not yet run. The second half of call2.sh's A/B of
# EMBER_PARTIAL_RANK=1 (`rank`) against the same library without it (`head`): hf-llama two rounds (its
# tensors share regions as llama.cpp's do), then cnn and star two rounds each (ab-37's call 8 had cnn
# 0.465-0.469 s under the rule against 0.449-0.462). Adaptive at 1.5x of a 16 GiB budget, a process each in
# turn, the order turning each round.
source tools/bench/device-call.sh c3
cp build/lib-head.so build/lib-rank.so
env_of() { [ "$1" = rank ] && echo EMBER_PARTIAL_RANK=1 || echo EMBER_PARTIAL_RANK=0; }
for round in 0 1; do
  order="rank head"; [ $round = 1 ] && order="head rank"
  for v in $order; do time_left 110 && hf $v $round "$(env_of $v)"; done
done
for w in cnn star; do
  for round in 0 1; do
    order="head rank"; [ $round = 1 ] && order="rank head"
    for v in $order; do time_left 20 && { use $v; one "$w-$v-$round" $w EMBER_LOG=info "$(env_of $v)"; }; done
  done
done
finish
