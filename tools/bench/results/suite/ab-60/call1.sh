#!/usr/bin/env bash
# Session 64, call 1, at 2010ffbf: training's bound on one machine (session 63's call 4, never run),
# and on an H200 (the matrix's card) the matrix's token generation and model build at 1.5x first:
# its H200 records predate the background touches (session 50) and the idle stamp (session 63).
# Pack with EMBER_PACK_TESTS=gpu EMBER_PACK_KEEP="ember-uvm-bench ember-sparse-probe"; carry build-gpu.
source tools/bench/device-call.sh c60-1
if grep -q H200 "$R/gpu.txt"; then
  EMBER_CALL_SECONDS=$((call_seconds - 170)) call_seconds=$((call_seconds - 170)) hf_cells "resident static adaptive"
fi
out=$R/train; mkdir -p "$out"
train() { # LABEL LIMIT [EMBER ARGS...]
  local label=$1 limit=$2; shift 2
  stage "train $label"
  local f=$out/$label variant=${label%-[0-9]} # adaptive-1.5-2: the report's row adaptive-1.5
  if (($#)); then
    TRAIN_VARIANT=$variant EMBER_STATS=$f.stats.json timeout "$limit" "$run" --driver real "$@" -- \
      python3 tools/bench/train_step.py 24576 12 >"$f.json" 2>"$f.err"
  else
    TRAIN_VARIANT=$variant timeout "$limit" python3 tools/bench/train_step.py 24576 12 >"$f.json" 2>"$f.err"
  fi
  echo "train $label: rc $? $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["median_step_seconds"], [round(x,3) for x in d["step_seconds"]], "build", d["build_seconds"], "peak GiB", round(d["gpu_peak_bytes"]/2**30,2), "loss", float.fromhex(d["losses"][-1]))' "$f.json" 2>&1 | tail -n 1)"
  grep -E '^ember\[[0-9]+\] (warn|error)|at exit: peak' "$f.err" | head -3
  gzip -f "$f.err" 2>/dev/null; pack
}
ember=(--manage-all 1 --budget 16G --log info)
cat "$R/suite/probe.json" "$R/suite/sparse-probe.json" 2>/dev/null | head -c 600; echo
time_left 100 && train resident-1.5-1 60
time_left 80 && train adaptive-1.5-1 80 --mode adaptive "${ember[@]}"
time_left 60 && train static-1.5-1 80 --mode static "${ember[@]}"
time_left 40 && train adaptive-1.5-2 80 --mode adaptive "${ember[@]}"
finish
