#!/usr/bin/env bash
# Session 55, call 1, at the head (EMBER_KEEP_FREED on by default at 2%). Pack with EMBER_PACK_TESTS=gpu;
# carry build-gpu. On an H200 (the matrix's card): ab-49/call1.sh, the hf cells at 1.5x (resident and
# adaptive, their load_seconds: the criterion on model initialisation) and bitonic at 1.5x under mapped.
# On any other card: 1. every GPU test at the defaults, nothing set; 2. past_budget_speed.py 24 GiB,
# five passes, adaptive, 16 GiB budget, manage-all, under JAX's cuda_async and CuPy's MemoryAsyncPool,
# EMBER_KEEP_FREED 0 against the default, a process each, rounds in turned order while time is left.
source tools/bench/device-call.sh c51-1
if grep -q H200 "$R/gpu.txt"; then
  out=$R/hf && mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  stage "hf at 1.5x, resident and adaptive"
  EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS="resident adaptive" \
    EMBER_SUITE_TIMEOUT=90 timeout 260 bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
  if time_left 200; then
    out=$R/bitonic-mapped && mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    stage "bitonic 1.5 mapped"
    EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=mapped EMBER_SUITE_ONLY=bitonic \
      EMBER_SUITE_TIMEOUT=$((call_seconds - SECONDS - 40)) timeout $((call_seconds - SECONDS - 20)) \
      bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
    gzip -f "$out"/logs/*.log 2>/dev/null
  fi
  finish
  exit 0
fi
stage "gpu tests at the defaults"
(cd build && EMBER_GPU_TIMEOUT=60 EMBER_GPU_VERBOSE=1 timeout 260 ctest -L gpu --output-on-failure -V \
  >"$R/gpu-tests.log" 2>&1)
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|kept freed memory" "$R/gpu-tests.log" | head -30
pack
mkdir -p "$R/speed"
JA="XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async"
speeds=("jax-cuda-async 0 jax $JA" "jax-cuda-async default jax $JA" "cupy-async 0 cupy-async" "cupy-async default cupy-async")
for round in 0 1; do
  now=("${speeds[@]}"); [ $round = 1 ] && mapfile -t now < <(printf '%s\n' "${speeds[@]}" | tac)
  while read -r label keep fw envs; do
    time_left 70 || break
    out=$R/speed/$label-$keep-$round; stage "speed $label-$keep-$round"
    keepenv=(); [ "$keep" = default ] || keepenv=(EMBER_KEEP_FREED="$keep")
    # shellcheck disable=SC2086 # the variant's settings, a word each
    env $envs "${keepenv[@]}" PAST_BUDGET_VARIANT="$label-$keep" timeout 65 "$run" --driver real --mode adaptive \
      --budget 16G --manage-all 1 --log info --stats "$out.stats.json" -- python3 tools/bench/past_budget_speed.py "$fw" 24576 5 \
      >"$out.json" 2>"$out.err"
    echo "rc $?" >>"$out.err"; gzip -f "$out.stats.json" 2>/dev/null
    echo "$label-$keep-$round $(tail -n 1 "$out.json" | cut -c1-300) $(grep -o '[0-9]* stream-ordered allocations were given.*' "$out.err" | cut -c1-120)"
    pack
  done < <(printf '%s\n' "${now[@]}")
done
finish
