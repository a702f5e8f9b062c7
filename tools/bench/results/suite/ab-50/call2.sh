#!/usr/bin/env bash
# Prepared, never run (no machine came; call3.sh is its cut). Session 54, call 2, at e2b5e50 (a pool keeps what passes its release threshold only until the next
# synchronisation; bytes_trimmed). Pack with EMBER_PACK_TESTS=gpu; carry build-gpu; on whichever card comes.
# 1. Every GPU test with EMBER_KEEP_FREED=2% in the environment, the default it would take
#    (gpu.torch_keep_freed sets 64M itself; call 1 ran them at 0).
# 2. An allocation per op, as call 1 (EMBER_KEEP_FREED 0 and 256M, and without Ember), one round.
# 3. past_budget_speed.py 24 GiB, five passes, under ember-run --budget 16G --manage-all 1, adaptive:
#    PyTorch's backend:cudaMallocAsync, JAX cuda_async and CuPy's MemoryAsyncPool, EMBER_KEEP_FREED 0 and
#    2% (of the budget), one round, while time is left.
source tools/bench/device-call.sh c50-2
mkdir -p "$R/ops" "$R/speed"
stage "gpu tests"
(cd build && EMBER_KEEP_FREED=2% EMBER_GPU_TIMEOUT=60 EMBER_GPU_VERBOSE=1 timeout 240 ctest -L gpu --output-on-failure -V >"$R/gpu-tests.log" 2>&1)
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|kept freed memory" "$R/gpu-tests.log" | head -30
pack
TA=PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
JA="XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async"
variants=(
  "torch-async plain torch $TA" "torch-async 0 torch $TA" "torch-async 256M torch $TA"
  "jax-cuda-async plain jax $JA" "jax-cuda-async 0 jax $JA" "jax-cuda-async 256M jax $JA"
)
while read -r label keep fw envs; do
  time_left 300 || break
  out=$R/ops/$label-$keep-0; stage "$label-$keep-0"
  cmd=(python3 tools/bench/torch_tiny_ops.py 20 alloc); [ "$fw" = jax ] && cmd=(python3 tools/bench/jax_tiny_ops.py 20)
  # shellcheck disable=SC2086 # the variant's settings, a word each
  if [ "$keep" = plain ]; then env $envs timeout 60 "${cmd[@]}" >"$out.json" 2>"$out.err"
  else env $envs EMBER_KEEP_FREED="$keep" timeout 60 "$run" --driver real --budget 16G --manage-all 1 --log info \
    --stats "$out.stats.json" -- "${cmd[@]}" >"$out.json" 2>"$out.err"; fi
  echo "rc $?" >>"$out.err"; gzip -f "$out.stats.json" 2>/dev/null
  echo "$label-$keep-0 $(tail -n 1 "$out.json" | cut -c1-200) $(grep -o '[0-9]* stream-ordered allocations were given.*' "$out.err" | cut -c1-120)"
done < <(printf '%s\n' "${variants[@]}")
pack
speeds=("torch-async 0 torch $TA" "torch-async 2% torch $TA" "jax-cuda-async 0 jax $JA" "jax-cuda-async 2% jax $JA"
  "cupy-async 0 cupy-async" "cupy-async 2% cupy-async")
while read -r label keep fw envs; do
  time_left 80 || break
  out=$R/speed/$label-${keep%\%}-0; stage "speed $label-$keep-0"
  # shellcheck disable=SC2086 # the variant's settings, a word each
  env $envs EMBER_KEEP_FREED="$keep" PAST_BUDGET_VARIANT="$label-$keep" timeout 75 "$run" --driver real --mode adaptive \
    --budget 16G --manage-all 1 --log info --stats "$out.stats.json" -- python3 tools/bench/past_budget_speed.py "$fw" 24576 5 \
    >"$out.json" 2>"$out.err"
  echo "rc $?" >>"$out.err"; gzip -f "$out.stats.json" 2>/dev/null
  echo "$label-$keep-0 $(tail -n 1 "$out.json" | cut -c1-300) $(grep -o '[0-9]* stream-ordered allocations were given.*' "$out.err" | cut -c1-120)"
  pack
done < <(printf '%s\n' "${speeds[@]}")
finish
