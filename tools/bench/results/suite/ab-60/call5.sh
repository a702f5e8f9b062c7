#!/usr/bin/env bash
# Session 64, call 5, on an H200 (warm after call 4): two rounds of head (49af0584) against base
# (2010ffbf), adaptive at 1.5x (both traced in round 4), then static and resident once.
# Pack with EMBER_PACK_LIBS="base=2010ffbf" EMBER_PACK_TESTS=gpu; carry build-gpu.
# Pack with EMBER_PACK_LIBS="base=2010ffbf" EMBER_PACK_TESTS=gpu; carry build-gpu.
source tools/bench/device-call.sh c60-5
out=$R/train; mkdir -p "$out"
train() { # LABEL VARIANT LIMIT [EMBER ARGS...]: one process of 12 steps at 24 GiB, its JSON line and its stats
  local label=$1 variant=$2 limit=$3; shift 3
  stage "train $label"
  local f=$out/$label trace=
  case $label in *-4) trace=$f.trace ;; esac
  TRAIN_VARIANT=$variant EMBER_STATS=$f.stats.json EMBER_TRACE=$trace timeout "$limit" "$run" --driver real "$@" -- \
    python3 tools/bench/train_step.py 24576 12 >"$f.json" 2>"$f.err"
  echo "train $label: rc $? $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["median_step_seconds"], [round(x,3) for x in d["step_seconds"]], "build", d["build_seconds"], "peak GiB", round(d["gpu_peak_bytes"]/2**30,2), "loss", float.fromhex(d["losses"][-1]))' "$f.json" 2>&1 | tail -n 1)"
  grep -E '^ember\[[0-9]+\] (warn|error)|at exit: peak|tensor lists' "$f.err" | head -5
  gzip -f "$f.err" "$f.trace" 2>/dev/null; pack
}
for round in 4 5; do
  order="base head"; [ $round = 5 ] && order="head base"
  for lib in $order; do
    variant=adaptive-1.5; [ "$lib" = base ] && variant=adaptive-2010ffbf-1.5 # the report's rows
    time_left 150 && { use "$lib"; train "adaptive-$lib-$round" $variant 80 --mode adaptive --manage-all 1 --budget 16G --log info; }
  done
done
use head
time_left 60 && train static-head-1 static-1.5 80 --mode static --manage-all 1 --budget 16G --log info
time_left 40 && TRAIN_VARIANT=resident-1.5 timeout 60 python3 tools/bench/train_step.py 24576 12 >"$out/resident-1.json" 2>"$out/resident-1.err"; echo "resident: $(cat $out/resident-1.json | head -c 300)"
finish
