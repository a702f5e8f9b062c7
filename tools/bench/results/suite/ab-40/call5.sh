#!/usr/bin/env bash
# Session 42, the first with a device since ab-39: calls 1 to 4 (prepared in sessions 40 and 41) regrouped
# by what needs llama.cpp, which was still building. This call takes their runs that do not; call6.sh the
# rest. Adaptive at 1.5x of a 16 GiB budget, a process each in turn, the order turning each round.
# - call2's ember-readmostly-probe (4 GiB, without Ember), first.
# - call2's EMBER_PARTIAL_RANK=1 (`rank`) against 0 (`head`) on radix, three rounds.
# - call4's EMBER_READ_MOSTLY=1 (`dup`) against 0 (`head`) on pathfinder (three rounds) and star (two).
# - call3's partial-rank on cnn and star, two rounds each.
# - call1's scan element sizes (head) against their parent (7af7afe, `base`; pack with
#   EMBER_PACK_LIBS=base=7af7afe) on bfs and hf-llama, two rounds each.
source tools/bench/device-call.sh c5
stage readmostly-probe
timeout 120 build/bin/ember-readmostly-probe 4294967296 >"$R/readmostly-probe.json" 2>"$R/readmostly-probe.err"
pack
for v in rank dup; do cp build/lib-head.so build/lib-$v.so; done
rank_env() { [ "$1" = rank ] && echo EMBER_PARTIAL_RANK=1 || echo EMBER_PARTIAL_RANK=0; }
dup_env() { [ "$1" = dup ] && echo EMBER_READ_MOSTLY=1 || echo EMBER_READ_MOSTLY=0; }
for round in 0 1 2; do
  order="rank head"; [ $round = 1 ] && order="head rank"
  for v in $order; do time_left 300 && { use $v; one "radix-$v-$round" radix EMBER_LOG=info "$(rank_env $v)"; }; done
done
for w in pathfinder star; do
  rounds="0 1 2"; [ $w = star ] && rounds="0 1"
  for round in $rounds; do
    order="dup head"; [ $round = 1 ] && order="head dup"
    for v in $order; do time_left 250 && { use $v; one "$w-$v-$round" $w EMBER_LOG=info "$(dup_env $v)"; }; done
  done
done
for round in 0 1; do
  order="head base"; [ $round = 1 ] && order="base head"
  for v in $order; do time_left 90 && hf $v $round; done
done
for round in 0 1; do
  order="head base"; [ $round = 1 ] && order="base head"
  for v in $order; do time_left 40 && { use $v; one "bfs-$v-$round" bfs EMBER_LOG=info; }; done
done
for w in cnn star; do
  for round in 0 1; do
    order="head rank"; [ $round = 1 ] && order="rank head"
    for v in $order; do time_left 15 && { use $v; one "$w-r-$v-$round" $w EMBER_LOG=info "$(rank_env $v)"; }; done
  done
done
finish
