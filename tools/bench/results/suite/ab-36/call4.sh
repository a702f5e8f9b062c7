#!/usr/bin/env bash
# session 36, call 4: the head (570b8f7, build/lib-head.so) against "pieces" (build/lib-pieces.so: a
# kernel that has passed an argument pointing inside an allocation is no longer credited the whole
# allocation when that argument is an allocation's base; llama.cpp's output norm, its weights buffer's
# first tensor, had credited all 25.7 GB once a token) under adaptive at 1.5x. llama.cpp 13B F16 at a
# 16 GiB budget by llama-bench directly (the model written once), rounds of a process each in turn, the
# order turning each round; then hf-llama, cnn and star through the suite, a round each in turn.
source tools/bench/device-call.sh c4
use() { cp "build/lib-$1.so" build/lib/libember.so; }
model=/tmp/ember-13b.gguf
stage "writing the model"
python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" "$model" 13b >"$R/gguf.log" 2>&1
bench=("$EMBER_LLAMA_BENCH" -m "$model" -p 0 -n 8 -r 3 -o jsonl -ngl 99)
for round in 0 1 2 3; do
  order=(head pieces)
  [ $((round % 2)) = 1 ] && order=(pieces head)
  for v in "${order[@]}"; do
    [ "$SECONDS" -lt 380 ] || continue
    use "$v"
    out=$R/llama-$v-$round
    stage "llama $v round $round"
    GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 timeout 120 "$run" --driver real --mode adaptive --budget 16G \
      --stats "$out.stats.json" --log info -- "${bench[@]}" >"$out.jsonl" 2>"$out.err"
    echo "rc $?" >>"$out.err"
    pack
  done
done
rm -f "$model"
for round in 0 1; do
  order=(head pieces)
  [ $((round % 2)) = 1 ] && order=(pieces head)
  for v in "${order[@]}"; do
    [ "$SECONDS" -lt 380 ] || continue
    use "$v"
    stage "hf-llama $v round $round"
    out=$R/hf-$v-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_SKIP="hf-mixtral-*" \
      EMBER_SUITE_TIMEOUT=90 timeout $((520 - SECONDS)) bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
    pack
  done
done
for w in cnn star; do
  for v in head pieces; do
    [ "$SECONDS" -lt 460 ] || continue
    use "$v"
    stage "$w $v"
    out=$R/$w-$v-0; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_ONLY=$w EMBER_SUITE_TIMEOUT=60 \
      timeout 80 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
    pack
  done
done
use head
stage done
pack
for f in "$R"/llama-*.jsonl; do
  python3 -c "
import json,sys,os
name=os.path.basename(sys.argv[1])[:-6]
st=sys.argv[1][:-6]+'.stats.json'
for l in open(sys.argv[1]):
    r=json.loads(l)
    s=json.load(open(st))['devices'][0] if os.path.exists(st) else {}
    print(name, r.get('avg_ns',0)/1e9, [round(x/1e9,4) for x in r.get('samples_ns',[])], s.get('bytes_promoted'), s.get('bytes_demoted'))
" "$f"
done
for f in "$R"/*-*-*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('d2h_bytes'), r.get('error'))
" "$f"
done
cat "$R/progress.log"
