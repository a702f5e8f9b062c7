#!/usr/bin/env bash
# Prepared in session 40, when no device was lent; not yet run. The launch scan's element sizes from the
# kernels' mangled names (051153a, `head`) against its parent (7af7afe, `base`: pack with
# EMBER_PACK_LIBS=base=7af7afe bash tools/bench/device-pack.sh LLAMA_BUILD),
# adaptive at 1.5x of a 16 GiB budget, a process each in turn, the order turning each round.
# First one llama.cpp process under head, traced: its F16 matrix kernels' L ranges should be their
# tensors' bytes (52,428,800 for a 5120 x 5120 tensor, where diag/llama-cpp-1.5-adaptive has 104,857,600),
# which says the demangling works inside llama-bench. Then llama.cpp by llama-bench directly (three
# rounds: that trace with its F16 ranges halved replays demoting 0.14 GiB against 1.39), hf-llama (two:
# PyTorch's kernels that take typed pointers are sized too) and bfs (two: expand's row offsets are
# uint64_t, 8 bytes an element where 4 were taken).
source tools/bench/device-call.sh c1
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
for round in 0 1 2; do
  order="head base"; [ $round = 1 ] && order="base head"
  for v in $order; do time_left 250 && llama $v $round; done
done
for round in 0 1; do
  order="head base"; [ $round = 1 ] && order="base head"
  for v in $order; do time_left 110 && hf $v $round; done
done
for round in 0 1; do
  order="head base"; [ $round = 1 ] && order="base head"
  for v in $order; do time_left 20 && { use $v; one "bfs-$v-$round" bfs EMBER_LOG=info; }; done
done
finish
