#!/usr/bin/env bash
# session 36, call 3, at the head (570b8f7's shim): where llama.cpp's time at 1.5x goes. The 13B F16
# model (26 GB) is written once; llama-bench (-p 0 -n 8 -r 3, all layers on the GPU, unified memory)
# then runs under adaptive at budgets of 12, 14, 16, 18 and 20 GiB, rounds of a process each in turn,
# the order turning each round, with two resident processes (no Ember, plain device memory). Each
# process's token time against its resident bytes gives the rate llama.cpp's kernels draw the rest
# over the link (the slope) and what a token costs besides (the intercept), to set beside the probe's
# 51.3 GB/s and resident's token time: which of the two the 0.886 of the bound is short by.
source tools/bench/device-call.sh c3
model=/tmp/ember-13b.gguf
stage "writing the model"
python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" "$model" 13b >"$R/gguf.log" 2>&1
bench=("$EMBER_LLAMA_BENCH" -m "$model" -p 0 -n 8 -r 3 -o jsonl -ngl 99)
one() { # budget round
  local out=$R/llama-$1-$2
  stage "budget $1 round $2"
  if [ "$1" = resident ]; then
    timeout 120 "${bench[@]}" >"$out.jsonl" 2>"$out.err"
  else
    GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 timeout 120 "$run" --driver real --mode adaptive --budget "$1" \
      --stats "$out.stats.json" --log info -- "${bench[@]}" >"$out.jsonl" 2>"$out.err"
  fi
  echo "rc $?" >>"$out.err"
  pack
}
one resident 0
for round in 0 1 2; do
  budgets=(12G 14G 16G 18G 20G)
  [ $((round % 2)) = 1 ] && budgets=(20G 18G 16G 14G 12G)
  for b in "${budgets[@]}"; do
    time_left 40 && one "$b" "$round"
  done
done
time_left 30 && one resident 1
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
    print(name, r.get('avg_ns',0)/1e9, [round(x/1e9,4) for x in r.get('samples_ns',[])], s.get('bytes_promoted'), s.get('bytes_demoted'), s.get('peak_bytes'))
" "$f"
done
cat "$R/progress.log"
