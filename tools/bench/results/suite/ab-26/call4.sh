#!/usr/bin/env bash
# session 26, call 4: loading a checkpoint under manage-all, beside drawing the model (the criterion reads
# "initialising or loading"; drawing has a floor past 1.5x under this budget, notes.json hf-llama@1.5). For
# hf-llama 13b and hf-mixtral 8x1.5b at 1.5x of the 16 GiB budget: the model drawn once without Ember and
# saved as safetensors in /tmp (a container's /dev/shm may be 64 MiB; the page cache keeps what was just
# written, as it keeps a checkpoint loaded a second time), then
# from_pretrained onto the GPU and two generations of 8 tokens, without Ember and under static and adaptive,
# two rounds of a process each in turn. load_seconds is from_pretrained's time.
source tools/bench/device-call.sh c4
mkdir -p "$R/load"
cd tools/bench
for model in "llama 13b" "mixtral 8x1.5b"; do
  set -- $model
  ckpt=/tmp/ember-ckpt-$1-$2
  time_left 150 || { stage "$1 $2: no time left"; continue; }
  free_kb=$(df -Pk /tmp | awk 'NR == 2 { print $4 }')
  [ "${free_kb:-0}" -gt $((40 << 20)) ] || { stage "$1 $2: /tmp has ${free_kb:-?} KiB free, not 40 GiB"; continue; }
  stage "$1 $2: save"
  timeout 150 python3 hf_generate.py "$1" "$2" save "$ckpt" >"$R/load/$1-save.json" 2>"$R/load/$1-save.log"
  for round in 0 1; do
    order="resident static adaptive"
    [ $round = 1 ] && order="adaptive static resident"
    for v in $order; do
      time_left 90 || { stage "$1 $v round $round: no time left"; continue; }
      stage "$1 $2 load $v round $round"
      f=$R/load/$1-$v-$round
      case $v in
        resident) timeout 120 python3 hf_generate.py "$1" "$2" 8 2 load "$ckpt" >"$f.json" 2>"$f.log" ;;
        *) timeout 120 "$run" --driver real --mode "$v" --manage-all 1 --budget 16G --stats "$f.stats.json" --log info \
             -- python3 hf_generate.py "$1" "$2" 8 2 load "$ckpt" >"$f.json" 2>"$f.log" ;;
      esac
      echo "rc $?" >>"$f.log"
      pack
    done
  done
  rm -rf "$ckpt"
done
cd "$here"
stage done
pack
for f in "$R"/load/*.json; do
  case $f in *.stats.json) continue ;; esac
  echo "$(basename "$f") $(python3 -c "
import json,sys
try:
    r=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
    print(r.get('save_seconds') or (r.get('load_seconds'), r.get('run_seconds')))
except Exception as e: print('failed', e)
" "$f")"
done
cat "$R/progress.log"
