#!/usr/bin/env bash
# Session 62, call 2, at the head, on call 1's warm machine: does adaptive settle on training?
# train_step.py at 24 GiB under a 16 GiB budget (manage-all), 12 timed steps, adaptive then static,
# two processes each in turn. Pack as call 1.
source tools/bench/device-call.sh c58-2
out=$R/train; mkdir -p "$out"
for round in 1 2; do
  for mode in adaptive static; do
    time_left 40 || break
    f=$out/$mode-$round; stage "train $mode $round"
    TRAIN_VARIANT=$mode-1.5 EMBER_STATS=$f.stats.json timeout 70 "$run" --driver real --mode $mode --manage-all 1 \
      --budget 16G --log info -- python3 tools/bench/train_step.py 24576 12 >"$f.json" 2>"$f.err"
    echo "$mode $round: rc $? $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["median_step_seconds"], d["step_seconds"])' "$f.json" 2>&1 | tail -n 1) $(grep -o 'at exit: peak.*' "$f.err")"
    gzip -f "$f.err"; pack
  done
done
finish
