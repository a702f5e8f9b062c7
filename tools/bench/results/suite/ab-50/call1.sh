#!/usr/bin/env bash
# Session 54, call 1 (ab-49's call5.sh, prepared in session 53 and never run, with the GPU tests first and
# at the defaults). Pack with EMBER_PACK_TESTS=gpu; carry build-gpu; on whichever card comes.
# 1. Every GPU test with the defaults (gpu.torch_keep_freed sets EMBER_KEEP_FREED itself).
# 2. An allocation per op (torch_tiny_ops.py 20 alloc under backend:cudaMallocAsync; jax_tiny_ops.py 20
#    under cuda_async) without Ember, and under ember-run --budget 16G --manage-all 1 with
#    EMBER_KEEP_FREED 0 and 256M. Two rounds, the order turning; a process each.
# (ab-49's part 3, the 24 GiB passes, is call 2's.)
source tools/bench/device-call.sh c50-1
mkdir -p "$R/ops" "$R/speed"
stage "gpu tests"
(cd build && EMBER_GPU_TIMEOUT=60 EMBER_GPU_VERBOSE=1 timeout 260 ctest -L gpu --output-on-failure -V >"$R/gpu-tests.log" 2>&1)
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|PASS: .*kept" "$R/gpu-tests.log" | head -30
pack
TA=PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
JA="XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async"
variants=(
  "torch-async plain torch $TA" "torch-async 0 torch $TA" "torch-async 256M torch $TA"
  "jax-cuda-async plain jax $JA" "jax-cuda-async 0 jax $JA" "jax-cuda-async 256M jax $JA"
)
turned() { local -n list=$2; if [ "$1" = 0 ]; then printf '%s\n' "${list[@]}"; else printf '%s\n' "${list[@]}" | tac; fi; }
for round in 0 1; do
  while read -r label keep fw envs; do
    time_left 70 || break
    out=$R/ops/$label-$keep-$round; stage "$label-$keep-$round"
    cmd=(python3 tools/bench/torch_tiny_ops.py 20 alloc); [ "$fw" = jax ] && cmd=(python3 tools/bench/jax_tiny_ops.py 20)
    # shellcheck disable=SC2086 # the variant's settings, a word each
    if [ "$keep" = plain ]; then env $envs timeout 60 "${cmd[@]}" >"$out.json" 2>"$out.err"
    else env $envs EMBER_KEEP_FREED="$keep" timeout 60 "$run" --driver real --budget 16G --manage-all 1 --log info \
      --stats "$out.stats.json" -- "${cmd[@]}" >"$out.json" 2>"$out.err"; fi
    echo "rc $?" >>"$out.err"; gzip -f "$out.stats.json" 2>/dev/null
    echo "$label-$keep-$round $(tail -n 1 "$out.json" | cut -c1-200) $(grep -o '[0-9]* stream-ordered allocations were given.*' "$out.err" | cut -c1-120)"
  done < <(turned $round variants)
  pack
done
finish
