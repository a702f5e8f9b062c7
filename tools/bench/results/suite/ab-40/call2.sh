#!/usr/bin/env bash
# Prepared in session 41, when no device was lent; not yet run. Run it after call1.sh, and only if that
# call kept the scan's element sizes (llama.cpp's F16 ranges their tensors' bytes, no slower than base).
# EMBER_PARTIAL_RANK=1 (`rank`: hot regions a launch covered in part ranked at half their demand) against
# the same library without it (`head`), adaptive at 1.5x of a 16 GiB budget, a process each in turn, the
# order turning each round. ab-37's call 8 tried the rule as try/partial-rank: radix's settled third run
# 0.53 s against 1.09-1.13 (the hints' 0.51), but llama.cpp 1.553-1.677 s per 8 tokens against
# 1.555-1.576, demoting 0.59-0.65 GB against 0.08-0.13, when the scan credited its F16 tensors twice
# their bytes. The replays of the scan-types rewrite (results/sim/replays.jsonl, group partial-rank)
# put llama.cpp with exact ranges at 0.13 GiB demoted against 0.14 without the rule.
# Radix three rounds, llama.cpp three; call3.sh takes hf-llama, cnn and star.
# First ember-readmostly-probe (4 GiB, without Ember), for its host_check cases: whether read-mostly advice
# on a resident array that kernels only read keeps the GPU's copy through a host's check (pathfinder's run
# after its check pays 117 ms of refresh for 15,888 faults), and whether the demotion that withdraws the
# advice leaves the array mapped.
source tools/bench/device-call.sh c2
stage readmostly-probe
timeout 120 build/bin/ember-readmostly-probe 4294967296 >"$R/readmostly-probe.json" 2>"$R/readmostly-probe.err"
cp build/lib-head.so build/lib-rank.so
stage gguf
python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" /tmp/ember-13b.gguf 13b >"$R/gguf.log" 2>&1
pack
env_of() { [ "$1" = rank ] && echo EMBER_PARTIAL_RANK=1 || echo EMBER_PARTIAL_RANK=0; }
for round in 0 1 2; do
  order="rank head"; [ $round = 1 ] && order="head rank"
  for v in $order; do time_left 300 && { use $v; one "radix-$v-$round" radix EMBER_LOG=info "$(env_of $v)"; }; done
done
for round in 0 1 2; do
  order="head rank"; [ $round = 1 ] && order="rank head"
  for v in $order; do time_left 60 && llama $v $round "$(env_of $v)"; done
done
finish
