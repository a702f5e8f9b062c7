#!/usr/bin/env bash
# session 27, call 6: checkpoint loading at 1.5x of the 16 GiB budget, EMBER_POPULATE_HOST off and on. In ab-26's
# call 4 (H200) static moved 13.7 GiB and nothing back, yet loaded 1.43x (hf-llama) and 1.59x (hf-mixtral) as slowly
# as without Ember: from_pretrained's tensors/s halved once the budget was full, the copies past it landing in host
# pages never made. EMBER_POPULATE_HOST=1 makes those pages by the host's touches as the allocation returns. One
# model a call (ARCH SIZE: "llama 13b" or "mixtral 8x1.5b"): saved once without Ember, then three rounds of
# resident, adaptive, adaptive with EMBER_POPULATE_HOST=1, and static, a process each in turn.
#   bash tools/bench/results/suite/ab-27/call6.sh llama 13b
arch=${1:?usage: call6.sh ARCH SIZE} size=${2:?usage: call6.sh ARCH SIZE}
source tools/bench/device-call.sh c6-$arch
mkdir -p "$R/load"
cd tools/bench
ckpt=/tmp/ember-ckpt-$arch-$size
free_kb=$(df -Pk /tmp | awk 'NR == 2 { print $4 }')
if [ "${free_kb:-0}" -gt $((40 << 20)) ]; then
  stage "$arch $size: save"
  timeout 150 python3 hf_generate.py "$arch" "$size" save "$ckpt" >"$R/load/$arch-save.json" 2>"$R/load/$arch-save.log"
  for round in 0 1 2; do
    order="resident adaptive populate static"
    [ $round = 1 ] && order="static populate adaptive resident"
    [ $round = 2 ] && order="populate resident static adaptive"
    for v in $order; do
      time_left 45 || { stage "$v round $round: no time left"; continue; }
      stage "$arch $size load $v round $round"
      f=$R/load/$arch-$v-$round
      case $v in
        resident) timeout 90 python3 hf_generate.py "$arch" "$size" 8 2 load "$ckpt" >"$f.json" 2>"$f.log" ;;
        populate) EMBER_POPULATE_HOST=1 timeout 90 "$run" --driver real --mode adaptive --manage-all 1 --budget 16G \
            --stats "$f.stats.json" --log info -- python3 hf_generate.py "$arch" "$size" 8 2 load "$ckpt" >"$f.json" 2>"$f.log" ;;
        *) timeout 90 "$run" --driver real --mode "$v" --manage-all 1 --budget 16G --stats "$f.stats.json" --log info \
             -- python3 hf_generate.py "$arch" "$size" 8 2 load "$ckpt" >"$f.json" 2>"$f.log" ;;
      esac
      echo "rc $?" >>"$f.log"
      pack
    done
  done
  rm -rf "$ckpt"
else
  stage "$arch $size: /tmp has ${free_kb:-?} KiB free, not 40 GiB"
fi
cd "$here"
stage done
pack
python3 tools/bench/load_records.py "$R/load.jsonl" "$R=head" && python3 -c "
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1])]
for v in ('resident', 'adaptive', 'populate', 'static'):
    s = [r['load_seconds'] for r in rows if r['variant'] == v and 'load_seconds' in r]
    print(v, s, s and statistics.median(s))
" "$R/load.jsonl"
cat "$R/progress.log"
