#!/usr/bin/env bash
# Session 56, call 3 (never ran: the session's device time ran out): the split at the budget, now taking
# shareable allocations and behind EMBER_SPLIT_VMM (d70c50b, off by default), set for the head. Pack with
# EMBER_PACK_TESTS=gpu, EMBER_PACK_KEEP=ember-suite and EMBER_PACK_LIBS="base=8b7c1b4" (the library before
# any split); carry build-gpu.
# 1. the GPU tests whose memory is cuMemCreate's (JAX's and PyTorch's expandable segments past the budget,
#    and gpu.jax);
# 2. JAX 24 GiB past a 16 GiB budget (past_budget_speed.py, 3 passes, adaptive, manage-all, preallocation
#    off), before the split against the head, a process each, rounds in turned order;
# 3. PyTorch with expandable segments, the same cells;
# 4. the head once at EMBER_LOG=debug under JAX, for where each region went;
# 5. on an H200 only, bitonic at 1.5x under mapped (the matrix's last cell not run).
source tools/bench/device-call.sh c52-3
stage "gpu tests of cuMemCreate memory"
(cd build && EMBER_SPLIT_VMM=1 EMBER_GPU_TIMEOUT=60 EMBER_GPU_VERBOSE=1 timeout 200 ctest -L gpu -R "jax_past_budget|torch_expandable_past_budget|jax$" --output-on-failure -V \
  >"$R/gpu-tests.log" 2>&1)
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|peak" "$R/gpu-tests.log" | head -20
pack
mkdir -p "$R/speed"
for pair in "jax base" "jax head" "torch-exp base" "torch-exp head" "torch-exp head" "torch-exp base" "jax head" "jax base"; do
  read -r fw lib <<<"$pair"
  time_left 50 || break
  out=$R/speed/$fw-$lib-$SECONDS; use "$lib"; stage "$fw under $lib"
  envs=(env -u XLA_PYTHON_CLIENT_PREALLOCATE); py=jax
  [ "$fw" = torch-exp ] && envs=(env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) && py=torch
  split=(); [ "$lib" = head ] && split=(--split-vmm 1)
  "${envs[@]}" PAST_BUDGET_VARIANT="$fw-$lib" timeout 70 "$run" --driver real --mode adaptive "${split[@]}" \
    --budget 16G --manage-all 1 --log info --stats "$out.stats.json" -- python3 tools/bench/past_budget_speed.py $py 24576 3 \
    >"$out.json" 2>"$out.err"
  echo "rc $?" >>"$out.err"
  peak=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['devices'][0]['peak_bytes']>>20, 'MiB peak,', d['devices'][0]['bytes_vmm_on_host']>>20, 'MiB vmm on host')" "$out.stats.json" 2>/dev/null)
  gzip -f "$out.stats.json" 2>/dev/null
  echo "$fw $lib: $(tail -n 1 "$out.json" | grep -o '"build_seconds.*median_pass_seconds": [0-9.]*') $peak $(grep -c warn "$out.err") warnings"
  pack
done
use head
if time_left 60; then
  stage "jax regions at debug"
  env -u XLA_PYTHON_CLIENT_PREALLOCATE PAST_BUDGET_VARIANT=jax-regions timeout 50 "$run" --driver real --mode adaptive --split-vmm 1 \
    --budget 16G --manage-all 1 --log debug -- python3 tools/bench/past_budget_speed.py jax 24576 1 \
    >"$R/jax-regions.json" 2>"$R/jax-regions.err"
  echo "rc $?" >>"$R/jax-regions.err"
  grep -o 'cuMemCreate of [0-9]* MiB.*' "$R/jax-regions.err" | head -20
  xz -f "$R/jax-regions.err"
  pack
fi
grep -q H200 "$R/gpu.txt" && time_left 100 && cell bitonic 1.5 mapped 0 $((call_seconds - SECONDS - 50))
finish
