#!/usr/bin/env bash
# Session 63, call 2, call 1's warm H100: hf-llama head against base, two more rounds (call 1's one
# round had head 3% slower, a process each); train_step.py's static, resident and offload on this
# card (call 1's adaptive ran 0.35 s a step where ab-58's H100 ran 0.52), and one more adaptive round.
source tools/bench/device-call.sh c59-2
for round in 1 2; do
  order="base head"; [ $round = 2 ] && order="head base"
  for v in $order; do time_left 250 && hf "$v" "$round"; done
done
out=$R/train; mkdir -p "$out"
train() { # LABEL VARIANT LIMIT [EMBER ARGS...]
  local label=$1 variant=$2 limit=$3; shift 3
  stage "train $label"
  local f=$out/$label
  if (($#)); then
    TRAIN_VARIANT=$variant EMBER_STATS=$f.stats.json timeout "$limit" "$run" --driver real "$@" -- \
      python3 tools/bench/train_step.py 24576 12 >"$f.json" 2>"$f.err"
  else
    TRAIN_VARIANT=$variant timeout "$limit" python3 tools/bench/train_step.py 24576 12 ${TRAIN_ARGS:-} >"$f.json" 2>"$f.err"
  fi
  echo "train $label: rc $? $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["median_step_seconds"], [round(x,3) for x in d["step_seconds"]], "build", d["build_seconds"], "peak GiB", round(d["gpu_peak_bytes"]/2**30,2), "loss", float.fromhex(d["losses"][-1]))' "$f.json" 2>&1 | tail -n 1)"
  grep -E '^ember\[[0-9]+\] (warn|error)|at exit: peak' "$f.err" | head -3
  gzip -f "$f.err" 2>/dev/null; pack
}
use head
time_left 150 && train static-1.5 static-1.5 80 --mode static --manage-all 1 --budget 16G --log info
time_left 130 && train resident-1.5 resident-1.5 60
time_left 110 && TRAIN_ARGS=--offload-optimizer train offload-1.5 offload-1.5 80
time_left 80 && { use head; train adaptive-head-3 adaptive-1.5 80 --mode adaptive --manage-all 1 --budget 16G --log info; }
time_left 60 && { use base; train adaptive-base-3 adaptive-38cb4b60-1.5 80 --mode adaptive --manage-all 1 --budget 16G --log info; }
finish
