#!/usr/bin/env bash
# Session 62, call 3, on call 2's warm machine: the peer over as many steps. train_step.py
# --offload-optimizer at 24 GiB, 12 timed steps, two processes (no Ember). Pack as call 1.
source tools/bench/device-call.sh c58-3
out=$R/train; mkdir -p "$out"
for round in 1 2; do
  time_left 40 || break
  f=$out/offload-$round; stage "train offload $round"
  TRAIN_VARIANT=offload-1.5 timeout 80 python3 tools/bench/train_step.py 24576 12 --offload-optimizer >"$f.json" 2>"$f.err"
  echo "offload $round: rc $? $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["median_step_seconds"], d["step_seconds"], "peak GiB", round(d["gpu_peak_bytes"]/2**30,2))' "$f.json" 2>&1 | tail -n 1)"
  pack
done
finish
