#!/usr/bin/env bash
# Session 54, call 2 (ab-49's call5.sh part 3): past_budget_speed.py 24 GiB, five passes, JAX cuda_async and
# CuPy's MemoryAsyncPool, EMBER_KEEP_FREED 0 and 2% (of the budget). Two rounds, the order turning, while
# time is left. Pack with EMBER_PACK_TESTS=0; carry build-gpu; on whichever card comes.
source tools/bench/device-call.sh c50-2
mkdir -p "$R/speed"
JA="XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async"
turned() { local -n list=$2; if [ "$1" = 0 ]; then printf '%s\n' "${list[@]}"; else printf '%s\n' "${list[@]}" | tac; fi; }
speeds=("jax-cuda-async 0 jax $JA" "jax-cuda-async 2% jax $JA" "cupy-async 0 cupy-async" "cupy-async 2% cupy-async")
for round in 0 1; do
  while read -r label keep fw envs; do
    time_left 100 || break
    out=$R/speed/$label-${keep%\%}-$round; stage "speed $label-$keep-$round"
    # shellcheck disable=SC2086 # the variant's settings, a word each
    env $envs EMBER_KEEP_FREED="$keep" PAST_BUDGET_VARIANT="$label-$keep" timeout 90 "$run" --driver real --mode adaptive \
      --budget 16G --manage-all 1 --log info --stats "$out.stats.json" -- python3 tools/bench/past_budget_speed.py "$fw" 24576 5 \
      >"$out.json" 2>"$out.err"
    echo "rc $?" >>"$out.err"; gzip -f "$out.stats.json" 2>/dev/null
    echo "$label-$keep-$round $(tail -n 1 "$out.json" | cut -c1-300)"
  done < <(turned $round speeds)
  pack
done
finish
