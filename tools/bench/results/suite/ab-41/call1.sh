#!/usr/bin/env bash
# Session 44: read-mostly advice (EMBER_READ_MOSTLY=1) under the head, whose refresh of a read-mostly
# allocation after a host phase is no longer ordered before the launch (placement.c), adaptive at 1.5x
# of a 16 GiB budget, a process each in turn, the order turning each round. Pack with
# EMBER_PACK_LIBS=base=618a23f (the ordered refresh) and EMBER_PACK_TESTS=0; carry build-gpu.
# - pathfinder: head with the advice (`dup`), base with it (`bdup`), head without (`head`), two rounds:
#   ab-40's call 6 had the run after the check at 0.237 s with the advice against a third run of 0.214.
# - ab-40's call7.sh: the advice against none on bfs, kmeans, nw, radix, cnn and star, a process each.
# - ember-readmostly-probe (4 GiB, without Ember), whose copy_into cases time a copy from pinned host
#   memory into a GPU-resident array with the advice and without, as time allows.
# Run with EMBER_CALL_SECONDS set to what the session has left.
source tools/bench/device-call.sh c41-1
for round in 0 1; do
  order="dup bdup head"; [ $round = 1 ] && order="head bdup dup"
  for v in $order; do
    lib=head e=EMBER_READ_MOSTLY=1
    case $v in bdup) lib=base ;; head) e=EMBER_READ_MOSTLY=0 ;; esac
    use $lib
    time_left 25 && one "pathfinder-$v-$round" pathfinder EMBER_LOG=info $e
  done
done
use head
n=0
for w in bfs kmeans nw radix cnn star; do
  order="head dup"; [ $((n++ % 2)) = 1 ] && order="dup head"
  for v in $order; do
    e=EMBER_READ_MOSTLY=0; [ $v = dup ] && e=EMBER_READ_MOSTLY=1
    time_left 25 && one "$w-$v-0" $w EMBER_LOG=info $e
  done
done
time_left 75 && { stage readmostly-probe
  timeout 60 build/bin/ember-readmostly-probe 4294967296 >"$R/readmostly-probe.json" 2>"$R/readmostly-probe.err"; }
finish
