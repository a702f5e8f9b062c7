#!/usr/bin/env bash
# Session 50, call 5: checkpoint loading under EMBER_POPULATE_ASYNC=1, which made the model's build past the
# budget 14-17% faster (call 3), against the touches before each allocation returns, the default that loaded
# hf-llama 13b in 1.32x of resident's time on the H200 (ab-27's call 6): the copies of from_pretrained may now
# reach pages the pool has not made yet. hf-llama 13b saved once without Ember, then two rounds of resident,
# adaptive and adaptive with the pool, a process each in turn (hf_generate.py ... 8 2 load: the load, then
# 8-token generations), at 1.5x of the 16 GiB budget. Pack with EMBER_PACK_TESTS=0; carry build-gpu.
source tools/bench/device-call.sh c46-5
mkdir -p "$R/load"
cd tools/bench
ckpt=/tmp/ember-ckpt-llama-13b
stage "llama 13b: save"
timeout 150 python3 hf_generate.py llama 13b save "$ckpt" >"$R/load/llama-save.json" 2>"$R/load/llama-save.log"
for round in 0 1; do
  order="resident adaptive async"
  [ $round = 1 ] && order="async adaptive resident"
  for v in $order; do
    time_left 40 || { stage "$v round $round: no time left"; continue; }
    stage "llama 13b load $v round $round"
    f=$R/load/llama-$v-$round
    case $v in
      resident) timeout 90 python3 hf_generate.py llama 13b 8 2 load "$ckpt" >"$f.json" 2>"$f.log" ;;
      async) timeout 90 "$run" --driver real --mode adaptive --manage-all 1 --budget 16G --populate-async 1 \
          --stats "$f.stats.json" --log info -- python3 hf_generate.py llama 13b 8 2 load "$ckpt" >"$f.json" 2>"$f.log" ;;
      adaptive) timeout 90 "$run" --driver real --mode adaptive --manage-all 1 --budget 16G --stats "$f.stats.json" \
          --log info -- python3 hf_generate.py llama 13b 8 2 load "$ckpt" >"$f.json" 2>"$f.log" ;;
    esac
    echo "rc $?" >>"$f.log"
    pack
  done
done
rm -rf "$ckpt"
cd "$OLDPWD"
stage done
pack
for f in "$R"/load/llama-*-[0-9].json; do
  python3 -c "
import json, sys
r = json.loads(open(sys.argv[1]).read() or '{}')
print(sys.argv[1].split('/')[-1], 'load', r.get('load_seconds'), 'seconds', r.get('seconds'), r.get('run_seconds'))
" "$f"
done
grep -h "rc [1-9]" "$R"/load/*.log
cat "$R/progress.log"
