#!/usr/bin/env bash
# Session 42: the llama.cpp runs of calls 1 to 4 (see call5.sh), adaptive at 1.5x of a 16 GiB budget, a
# process each in turn, the order turning each round. Pack with EMBER_PACK_LIBS=base=7af7afe and the
# llama.cpp build.
# - call1: one traced process under head, whose F16 matrix kernels' L ranges should be their tensors'
#   bytes (52,428,800 for a 5120 x 5120 tensor; diag/llama-cpp-1.5-adaptive has 104,857,600); then head
#   (the scan's element sizes) against base (7af7afe, its parent), three rounds.
# - call2: EMBER_PARTIAL_RANK=1 (`rank`) against 0 (`head`), two rounds.
# - call4: EMBER_READ_MOSTLY=1 (`dup`) against 0 (`head`), two rounds: it has no host phase, so it must
#   be no slower.
# - call2's ember-readmostly-probe (4 GiB, without Ember) and partial-rank on radix, two rounds.
# - call4's read-mostly on pathfinder, two rounds.
# - call1's head against base on hf-llama, a round, as time allows.
# The device was slow to start (three tries refused), so this call came first and took the runs that
# settle the most; call5.sh has the rest.
source tools/bench/device-call.sh c6
stage readmostly-probe
timeout 60 build/bin/ember-readmostly-probe 4294967296 >"$R/readmostly-probe.json" 2>"$R/readmostly-probe.err"
stage gguf
python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" /tmp/ember-13b.gguf 13b >"$R/gguf.log" 2>&1
use head; stage "llama traced"
GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 timeout 60 "$run" --driver real --mode adaptive --budget 16G \
  --trace "$R/llama-head-traced.trace" --stats "$R/llama-head-traced.stats.json" -- "$EMBER_LLAMA_BENCH" \
  -m /tmp/ember-13b.gguf -p 0 -n 8 -r 1 -o jsonl -ngl 99 >"$R/llama-head-traced.jsonl" 2>"$R/llama-head-traced.log"
python3 - "$R/llama-head-traced.trace" <<'PY' | tee "$R/llama-head-traced.ranges"
import collections, sys
ranges = collections.Counter()
for line in open(sys.argv[1], errors="replace"):
    f = line.split()
    if f and f[0] == "L":
        for r in f[5:]:
            p = r.split(":")
            if p[0] == "0" and int(p[2]) >= 1 << 20:
                ranges[(f[3], int(p[2]))] += 1
for (kernel, extent), n in sorted(ranges.items()):
    print("kernel", kernel, "extent", extent, "launches", n)
PY
gzip -f "$R/llama-head-traced.trace"
pack
for v in rank dup; do cp build/lib-head.so build/lib-$v.so; done
env_of() { case $1 in rank) echo EMBER_PARTIAL_RANK=1 ;; dup) echo EMBER_READ_MOSTLY=1 ;; *) echo EMBER_LOG=info ;; esac; }
for round in 0 1 2; do
  order="head base"; [ $round = 1 ] && order="base head"
  for v in $order; do time_left 330 && llama $v $round; done
done
for round in 0 1; do
  order="rank dup head"; [ $round = 1 ] && order="head dup rank"
  for v in $order; do time_left 150 && llama $v r$round "$(env_of $v)"; done
done
for w in radix pathfinder; do
  for round in 0 1; do
    order="head rank dup"; [ $round = 1 ] && order="dup rank head"
    [ $w = radix ] && order=${order/ dup/} && order=${order/dup /}
    for v in $order; do time_left 100 && { use $v; one "$w-$v-$round" $w EMBER_LOG=info "$(env_of $v)"; }; done
  done
done
for v in head base; do time_left 40 && hf $v 0; done
finish
