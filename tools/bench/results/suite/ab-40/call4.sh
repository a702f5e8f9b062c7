#!/usr/bin/env bash
# Prepared in session 41, when no device was lent; not yet run. Run it once call2.sh's readmostly probe has
# shown, in its host_check_readmostly case, that the GPU keeps its copy through the host's check (the read
# after it at the device's rate) and, in readmostly_demote_prefer_first, that the demotion leaves the array
# mapped (the read after it at the mapped rate, not faulting).
# EMBER_READ_MOSTLY=1 (`dup`: read-mostly advice on resident memory kernels only read, shim/mech/read_dup.h)
# against the same library without it (`head`), adaptive at 1.5x of a 16 GiB budget, a process each in
# turn, the order turning each round. pathfinder three rounds (its wall, read through `const int *`, is
# what its check between runs reads on the host: the run after it paid a 117 ms refresh, ab-38's call 1),
# star two (its columns are read through pointers to const too), then llama.cpp two (its weights are, and
# it has no host phase: it must be no slower).
source tools/bench/device-call.sh c4
cp build/lib-head.so build/lib-dup.so
env_of() { [ "$1" = dup ] && echo EMBER_READ_MOSTLY=1 || echo EMBER_READ_MOSTLY=0; }
for w in pathfinder star; do
  rounds="0 1 2"; [ $w = star ] && rounds="0 1"
  for round in $rounds; do
    order="dup head"; [ $round = 1 ] && order="head dup"
    for v in $order; do time_left 200 && { use $v; one "$w-$v-$round" $w EMBER_LOG=info "$(env_of $v)"; }; done
  done
done
stage gguf
[ -s /tmp/ember-13b.gguf ] || python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" /tmp/ember-13b.gguf 13b >"$R/gguf.log" 2>&1
for round in 0 1; do
  order="head dup"; [ $round = 1 ] && order="dup head"
  for v in $order; do time_left 60 && llama $v $round "$(env_of $v)"; done
done
finish
