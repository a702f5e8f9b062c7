#!/usr/bin/env bash
# Session 64, call 2: 49af0584 (head: PyTorch's tensor lists read by the chunks their blocks name)
# against 2010ffbf (base), a process each in turn, the order turning, adaptive at 1.5x of a 16 GiB
# budget under manage-all: train_step.py (24 GiB of weights, gradients and AdamW moments, 12 timed
# steps), three rounds, both traced in the first (for the replays); then the GPU tests of training.
# Pack with EMBER_PACK_LIBS="base=2010ffbf" EMBER_PACK_TESTS=gpu; carry build-gpu.
source tools/bench/device-call.sh c60-2
out=$R/train; mkdir -p "$out"
train() { # LABEL VARIANT LIMIT [EMBER ARGS...]: one process of 12 steps at 24 GiB, its JSON line and its stats
  local label=$1 variant=$2 limit=$3; shift 3
  stage "train $label"
  local f=$out/$label trace=
  case $label in *-1) trace=$f.trace ;; esac
  TRAIN_VARIANT=$variant EMBER_STATS=$f.stats.json EMBER_TRACE=$trace timeout "$limit" "$run" --driver real "$@" -- \
    python3 tools/bench/train_step.py 24576 12 >"$f.json" 2>"$f.err"
  echo "train $label: rc $? $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["median_step_seconds"], [round(x,3) for x in d["step_seconds"]], "build", d["build_seconds"], "peak GiB", round(d["gpu_peak_bytes"]/2**30,2), "loss", float.fromhex(d["losses"][-1]))' "$f.json" 2>&1 | tail -n 1)"
  grep -E '^ember\[[0-9]+\] (warn|error)|at exit: peak|tensor lists' "$f.err" | head -5
  gzip -f "$f.err" "$f.trace" 2>/dev/null; pack
}
for round in 1 2 3; do
  order="base head"; [ $round = 2 ] && order="head base"
  for lib in $order; do
    variant=adaptive-1.5; [ "$lib" = base ] && variant=adaptive-2010ffbf-1.5 # the report's rows
    time_left 150 && { use "$lib"; train "adaptive-$lib-$round" $variant 80 --mode adaptive --manage-all 1 --budget 16G --log info; }
  done
done
use head
time_left 100 && gpu_tests $((call_seconds - SECONDS - 20)) -R 'train|torch'
finish
