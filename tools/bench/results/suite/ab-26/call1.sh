#!/usr/bin/env bash
# session 26, call 1: star's dimension tables in a burst (4dc6527: a small table read densely that finds no
# room at its launch stays wanted, and the worker makes its room once a resident can give way). The GPU tests;
# then star at 1.5x of the 16 GiB budget under adaptive, the watermarks at 90/85 and at 97/93 (session 25's
# call 3: 6.15 and 5.74 s for the first two runs at 97/93), two processes each in turn, traced; then static
# at 97/93 beside them, as time allows.
source tools/bench/device-call.sh c1
(cd build && LD_LIBRARY_PATH=$PWD/devlibs timeout 150 ctest -L gpu --output-on-failure >"$R/ctest-gpu.log" 2>&1)
tail -3 "$R/ctest-gpu.log"; pack
for round in 0 1; do
  for wm in 90 97; do
    [ $round = 1 ] && wm=$((wm == 90 ? 97 : 90)) # the order turns each round
    time_left 60 || { stage "star $wm round $round: no time left"; continue; }
    stage "star adaptive $wm/$((wm == 90 ? 85 : 93)) round $round"
    out=$R/wm$wm-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    EMBER_HIGH_WATERMARK=$wm EMBER_LOW_WATERMARK=$((wm == 90 ? 85 : 93)) EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 \
      EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_ONLY=star EMBER_SUITE_TRACE='star-1.5-adaptive' \
      EMBER_SUITE_TIMEOUT=70 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
    pack
  done
done
# llama.cpp 13B F16 at 1.5x under adaptive: the head against the branch try/launch-order-repeats (its KV cache's
# churn gone in the replay, its window 1-8% slower there), when that branch's shim travels as
# build-gpu/lib-repeats/libember.so (git worktree add /tmp/wt try/launch-order-repeats, build its ember
# target, and copy the library there after device-pack.sh, which makes build-gpu anew), two rounds of a
# process each in turn
if [ -f build/lib-repeats/libember.so ] && [ -n "${EMBER_LLAMA_BENCH:-}" ] && time_left 150; then
  stage "llama gguf"
  mkdir -p "$R/llama"
  model=/tmp/m13b.gguf
  timeout 60 python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" $model 13b >"$R/llama/gguf.log" 2>&1
  for round in 0 1; do
    for v in head repeats; do
      [ $round = 1 ] && v=$([ $v = head ] && echo repeats || echo head)
      time_left 60 || { stage "llama $v round $round: no time left"; continue; }
      stage "llama adaptive $v round $round"
      shim=(); [ $v = repeats ] && shim=(--shim "$here/build/lib-repeats/libember.so")
      timeout 65 env GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 "$run" "${shim[@]}" --driver real --mode adaptive --budget 16G \
        --stats "$R/llama/$v.$round.stats.json" --log info -- "$EMBER_LLAMA_BENCH" -m $model -p 0 -n 8 -r 3 -o jsonl \
        -ngl 99 >"$R/llama/$v.$round.jsonl" 2>"$R/llama/$v.$round.log"
      echo "rc $?" >>"$R/llama/$v.$round.log"
      pack
    done
  done
fi
if time_left 80; then
  stage "star static 97/93"
  out=$R/static97; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_HIGH_WATERMARK=97 EMBER_LOW_WATERMARK=93 EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=static \
    EMBER_SUITE_ONLY=star EMBER_SUITE_TIMEOUT=70 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
fi
stage done
pack
for f in "$R"/*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('variant'), r.get('runs_seconds'), r.get('h2d_bytes'), r.get('d2h_bytes'), r.get('error'))
" "$f"
done
for f in "$R"/llama/*.jsonl; do
  [ -e "$f" ] && echo "$(basename "$f") $(grep -o '"samples_ns": \[[^]]*\]' "$f") $(grep -o '"bytes_demoted": [0-9]*' "${f%.jsonl}.stats.json")"
done
cat "$R/progress.log"
