#!/usr/bin/env bash
# Session 43, after calls 5 and 6 (on an H100): EMBER_READ_MOSTLY=1 (`dup`) against 0 (`head`) on the
# kernels those calls did not run it on, adaptive at 1.5x of a 16 GiB budget, a process each in turn,
# the order turning by workload. The head withdraws the advice before it prefers the host at a
# demotion (call 6's probe: the other order left 4 GiB faulting at 12.7 GB/s where mapped reads take
# 50.9). Run with EMBER_CALL_SECONDS set to what the session has left.
source tools/bench/device-call.sh c7
use head
n=0
for w in bfs kmeans nw radix cnn pathfinder; do
  order="head dup"; [ $((n++ % 2)) = 1 ] && order="dup head"
  for v in $order; do
    e=; [ $v = dup ] && e=EMBER_READ_MOSTLY=1
    time_left 25 && one "$w-$v-0" $w EMBER_LOG=info $e
  done
done
finish
