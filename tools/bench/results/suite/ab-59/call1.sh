#!/usr/bin/env bash
# Session 63, call 1: 88978159 (head) against 38cb4b60 (base), before launches that have nothing to
# decide stamped what they name (idle_ref), a process each in turn, the order turning, adaptive at
# 1.5x of a 16 GiB budget:
# 1. train_step.py (24 GiB of weights, gradients and AdamW moments, 12 timed steps, manage-all), two
#    rounds (head traced in its first): the replays of ab-58's trace moved 1.0 GB under head against
#    7.4 (the H100 4.7);
# 2. llama.cpp 13B F16 by llama-bench directly (-n 8 -r 3), two rounds, and transformers generate()
#    on hf-llama 13b through the suite, one round: of the older traces' replays only llama.cpp's moved
#    (one 5.8% faster, one 4-7% slower);
# 3. JAX's GPU tests, with the new gpu.jax_preloaded_past_budget: Ember preloaded under manage-all,
#    XLA_PYTHON_CLIENT_PREALLOCATE unset, which the shim now sets itself (never yet on a GPU).
# Pack with EMBER_PACK_LIBS="base=38cb4b60" EMBER_PACK_TESTS=gpu EMBER_PACK_KEEP="ember-suite ember-uvm-bench"
# and the llama.cpp build; carry build-gpu and .llama.
source tools/bench/device-call.sh c59-1
out=$R/train; mkdir -p "$out"
train() { # LABEL VARIANT LIMIT [EMBER ARGS...]: one process of 12 steps at 24 GiB, its JSON line and its stats
  local label=$1 variant=$2 limit=$3; shift 3
  stage "train $label"
  local f=$out/$label trace=
  [ "$label" = adaptive-head-1 ] && trace=$f.trace
  TRAIN_VARIANT=$variant EMBER_STATS=$f.stats.json EMBER_TRACE=$trace timeout "$limit" "$run" --driver real "$@" -- \
    python3 tools/bench/train_step.py 24576 12 >"$f.json" 2>"$f.err"
  echo "train $label: rc $? $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["median_step_seconds"], [round(x,3) for x in d["step_seconds"]], "build", d["build_seconds"], "peak GiB", round(d["gpu_peak_bytes"]/2**30,2), "loss", float.fromhex(d["losses"][-1]))' "$f.json" 2>&1 | tail -n 1)"
  grep -E '^ember\[[0-9]+\] (warn|error)|at exit: peak' "$f.err" | head -5
  gzip -f "$f.err" "$f.trace" 2>/dev/null; pack
}
for round in 1 2; do
  order="base head"; [ $round = 2 ] && order="head base"
  for lib in $order; do
    variant=adaptive-1.5; [ "$lib" = base ] && variant=adaptive-38cb4b60-1.5 # the report's rows
    time_left 400 && { use "$lib"; train "adaptive-$lib-$round" $variant 80 --mode adaptive --manage-all 1 --budget 16G --log info; }
  done
done
if time_left 330; then
  stage "writing the model"
  python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" /tmp/ember-13b.gguf 13b >"$R/gguf.log" 2>&1
  for round in 0 1; do
    order="base head"; [ $round = 1 ] && order="head base"
    for v in $order; do time_left 250 && llama "$v" "$round"; done
  done
  rm -f /tmp/ember-13b.gguf
fi
for v in head base; do time_left 160 && hf "$v" 0; done
use head
time_left 60 && gpu_tests $((call_seconds - SECONDS - 20)) -R 'jax'
finish
