#!/usr/bin/env bash
# Session 62, call 1, at the head: training past the budget, a real program no earlier call ran.
# Pack with EMBER_PACK_TESTS=gpu EMBER_PACK_KEEP="ember-suite ember-vmm-host-probe ember-torture"; carry build-gpu.
# 1. the two new GPU tests (train_past_budget.py: 1.5 GiB of weights, gradients and AdamW moments under
#    a 1 GiB budget, plain memory and expandable segments) and PyTorch's other past-budget tests;
# 2. train_step.py: 24 GiB of weights, gradients and AdamW moments (width 4096, 2048 tokens) under a
#    16 GiB budget, resident (no Ember), adaptive, static and mapped under manage-all, and the
#    optimizer offload a user would write without Ember; 8 GiB (0.5x) resident and adaptive; adaptive
#    at 1.5x traced, for ember-sim's replays;
# 3. the torture's stream-ordered pool rounds (never yet on a GPU): 2 managed and 4 stream-ordered
#    threads for 30 s without Ember and under the head.
source tools/bench/device-call.sh c58-1
gpu_tests 100 -R 'train|torch_past_budget|torch_expandable'
out=$R/train; mkdir -p "$out"
train() { # LABEL MIB LIMIT [EMBER ARGS...]: one process, its JSON line and its stats
  local label=$1 mib=$2 limit=$3; shift 3
  stage "train $label"
  local f=$out/$label
  if (($#)); then
    local trace=; [ "$label" = adaptive-1.5 ] && trace=$f.trace # for ember-sim's replays
    TRAIN_VARIANT=$label EMBER_STATS=$f.stats.json EMBER_TRACE=$trace timeout "$limit" "$run" --driver real "$@" -- \
      python3 tools/bench/train_step.py "$mib" 5 >"$f.json" 2>"$f.err"
  else
    TRAIN_VARIANT=$label timeout "$limit" python3 tools/bench/train_step.py "$mib" 5 ${TRAIN_ARGS:-} >"$f.json" 2>"$f.err"
  fi
  echo "train $label: rc $? $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["median_step_seconds"], d["step_seconds"], "build", d["build_seconds"], "peak GiB", round(d["gpu_peak_bytes"]/2**30,2), "loss", float.fromhex(d["losses"][-1]))' "$f.json" 2>&1 | tail -n 1)"
  grep -E '^ember\[[0-9]+\] (warn|error)|points into more than|pointed into more than|at exit: peak' "$f.err" | head -5
  gzip -f "$f.err" "$f.trace" 2>/dev/null; pack
}
ember=(--manage-all 1 --budget 16G --log info)
time_left 150 && train resident-1.5 24576 100
time_left 150 && train adaptive-1.5 24576 120 --mode adaptive "${ember[@]}"
time_left 150 && train static-1.5 24576 120 --mode static "${ember[@]}"
time_left 150 && TRAIN_ARGS=--offload-optimizer train offload-1.5 24576 120
time_left 120 && train resident-0.5 8192 80
time_left 120 && train adaptive-0.5 8192 80 --mode adaptive "${ember[@]}"
time_left 200 && train mapped-1.5 24576 150 --mode mapped "${ember[@]}"
tort() { # WHICH SECONDS [EMBER...]
  local which=$1 limit=$2; shift 2
  mkdir -p "$R/torture"; stage "torture $which"
  timeout "$limit" "$@" build/bin/ember-torture 2 30 16 0 4 >"$R/torture/$which.out" 2>"$R/torture/$which.err"
  echo "torture $which: rc $?; $(tr '\n' ' ' <"$R/torture/$which.out") $(grep -v '^ember\[' "$R/torture/$which.err" | head -c 400)"
  echo "  $(grep -o '[0-9]* stream-ordered allocations were given memory[^;]*' "$R/torture/$which.err")"
  pack
}
time_left 100 && tort plain 45
time_left 100 && tort head 60 "$run" --driver real --mode adaptive --budget 1G --manage-all 1 --keep-freed 256M --log info --
finish
