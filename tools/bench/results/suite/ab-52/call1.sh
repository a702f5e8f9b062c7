#!/usr/bin/env bash
# Session 56, call 1, at the head (session 55's kept-list fixes and the hooks_memory.c split, never yet
# on a GPU). Pack with EMBER_PACK_TESTS=gpu; carry build-gpu. 1. every GPU test at the defaults;
# 2. JAX past the budget under ember-run with nothing set (preallocation now off) and with it on;
# 3. on an H200 (the matrix's card) only: the cells ab-51/call5.sh owed, the hf cells at 1.5x (resident
# and adaptive) and bitonic at 1.5x under mapped, while time is left.
source tools/bench/device-call.sh c52-1
stage "gpu tests at the defaults"
(cd build && EMBER_GPU_TIMEOUT=60 EMBER_GPU_VERBOSE=1 timeout 250 ctest -L gpu --output-on-failure -V \
  >"$R/gpu-tests.log" 2>&1)
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|kept freed memory" "$R/gpu-tests.log" | head -30
pack
# ember-run now sets XLA_PYTHON_CLIENT_PREALLOCATE=false under manage-all unless the environment has it:
# JAX past a 16 GiB budget with nothing set, against the preallocation asked for (the old default)
mkdir -p "$R/jax"
for pre in unset true; do
  out=$R/jax/prealloc-$pre; stage "jax 24 GiB, preallocation $pre"
  preenv=(env -u XLA_PYTHON_CLIENT_PREALLOCATE); [ $pre = unset ] || preenv=(env XLA_PYTHON_CLIENT_PREALLOCATE=$pre)
  "${preenv[@]}" PAST_BUDGET_VARIANT="jax-prealloc-$pre" timeout 65 "$run" --driver real --mode adaptive --budget 16G \
    --manage-all 1 --log info --stats "$out.stats.json" -- python3 tools/bench/past_budget_speed.py jax 24576 3 \
    >"$out.json" 2>"$out.err"
  echo "rc $?" >>"$out.err"; gzip -f "$out.stats.json" 2>/dev/null
  echo "jax prealloc $pre: $(tail -n 1 "$out.json" | cut -c1-300) $(grep -c warn "$out.err") warnings"
done
pack
grep -q H200 "$R/gpu.txt" || { finish; exit 0; }
if time_left 250; then
  out=$R/hf && mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  stage "hf at 1.5x, resident and adaptive"
  EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS="resident adaptive" \
    EMBER_SUITE_TIMEOUT=90 timeout $((call_seconds - SECONDS - 20)) bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
fi
if time_left 100; then
  out=$R/bitonic-mapped && mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  stage "bitonic 1.5 mapped"
  EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=mapped EMBER_SUITE_ONLY=bitonic \
    EMBER_SUITE_TIMEOUT=$((call_seconds - SECONDS - 40)) timeout $((call_seconds - SECONDS - 20)) \
    bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
fi
finish
