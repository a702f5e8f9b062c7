#!/usr/bin/env bash
# Session 54, call 3: call2.sh cut to the device time left (call 2 never found a machine). At e2b5e50's
# code. Pack with EMBER_PACK_TESTS=gpu; carry build-gpu; run with EMBER_CALL_SECONDS=250.
# 1. The GPU tests that make stream-ordered allocations, and PyTorch's, with EMBER_KEEP_FREED=2% in the
#    environment (gpu.torch_keep_freed sets 64M itself).
# 2. PyTorch's allocation per op under backend:cudaMallocAsync: without Ember, EMBER_KEEP_FREED 0, 256M.
# 3. past_budget_speed.py torch 24 GiB, five passes, backend:cudaMallocAsync, EMBER_KEEP_FREED 0 and 2%.
source tools/bench/device-call.sh c50-3
mkdir -p "$R/ops" "$R/speed"
stage "gpu tests"
(cd build && EMBER_KEEP_FREED=2% EMBER_GPU_TIMEOUT=60 EMBER_GPU_VERBOSE=1 timeout 120 ctest -L gpu \
  -R 'keep_freed|async|gpu.torch$|torch_manage_all' --output-on-failure -V >"$R/gpu-tests.log" 2>&1)
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|kept freed memory" "$R/gpu-tests.log" | head -30
pack
TA=PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
for keep in plain 0 256M; do
  time_left 100 || break
  out=$R/ops/torch-async-$keep-0; stage "torch-async-$keep-0"
  if [ "$keep" = plain ]; then env $TA timeout 40 python3 tools/bench/torch_tiny_ops.py 20 alloc >"$out.json" 2>"$out.err"
  else env $TA EMBER_KEEP_FREED="$keep" timeout 40 "$run" --driver real --budget 16G --manage-all 1 --log info \
    --stats "$out.stats.json" -- python3 tools/bench/torch_tiny_ops.py 20 alloc >"$out.json" 2>"$out.err"; fi
  echo "rc $?" >>"$out.err"; gzip -f "$out.stats.json" 2>/dev/null
  echo "torch-async-$keep-0 $(tail -n 1 "$out.json" | cut -c1-200) $(grep -o '[0-9]* stream-ordered allocations were given.*' "$out.err" | cut -c1-120)"
done
pack
for keep in 0 2%; do
  time_left 60 || break
  out=$R/speed/torch-async-${keep%\%}-0; stage "speed torch-async-$keep-0"
  env $TA EMBER_KEEP_FREED="$keep" PAST_BUDGET_VARIANT="torch-async-$keep" timeout 55 "$run" --driver real --mode adaptive \
    --budget 16G --manage-all 1 --log info --stats "$out.stats.json" -- python3 tools/bench/past_budget_speed.py torch 24576 5 \
    >"$out.json" 2>"$out.err"
  echo "rc $?" >>"$out.err"; gzip -f "$out.stats.json" 2>/dev/null
  echo "torch-async-$keep-0 $(tail -n 1 "$out.json" | cut -c1-300) $(grep -o '[0-9]* stream-ordered allocations were given.*' "$out.err" | cut -c1-120)"
  pack
done
finish
