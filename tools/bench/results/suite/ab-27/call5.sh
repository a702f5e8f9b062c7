#!/usr/bin/env bash
# session 27, call 5 (the session's last 300 s): transformers generate() at 1.5x of the 16 GiB budget under
# adaptive, the watermarks at 90/85 against 97/93, a process each in turn, hf-llama 13b then hf-mixtral 8x1.5b
source tools/bench/device-call.sh c5
mkdir -p "$R/wm"
cd tools/bench
for model in "llama 13b" "mixtral 8x1.5b"; do
  set -- $model
  for wm in 90 97 97 90; do
    [ "$SECONDS" -lt 230 ] || { stage "$1 $wm: no time left"; continue; }
    lo=$((wm == 90 ? 85 : 93)); f=$R/wm/$1-$wm-$SECONDS
    stage "$1 $2 adaptive $wm/$lo"
    EMBER_HIGH_WATERMARK=$wm EMBER_LOW_WATERMARK=$lo timeout 60 "$run" --driver real --mode adaptive --manage-all 1 \
      --budget 16G --stats "$f.stats.json" -- python3 hf_generate.py "$1" "$2" 8 3 >"$f.json" 2>"$f.log"
    echo "rc $?" >>"$f.log"; pack
  done
done
cd "$here"; stage done; pack
for f in "$R"/wm/*.json; do
  case $f in *.stats.json) continue ;; esac
  echo "$(basename "$f") $(python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print(r['load_seconds'], r['run_seconds'])" "$f" 2>&1 | tail -1)"
done
