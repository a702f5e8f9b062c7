#!/usr/bin/env bash
# Session 53, call 4, on whichever card comes. Pack with EMBER_PACK_TESTS=gpu
# EMBER_PACK_LIBS="base=d46afce"; carry build-gpu.
# 1. What a framework's allocation per op costs under manage-all where its allocator asks the driver
#    for each: tools/bench/torch_tiny_ops.py 20 alloc (x = x + 1 on 16 floats) under PyTorch's caching
#    allocator and backend:cudaMallocAsync; tools/bench/jax_tiny_ops.py 20 under JAX's BFC pool, its
#    platform allocator and cuda_async. Each without Ember and under ember-run --budget 16G
#    --manage-all 1 (adaptive) with the packed library (head: a stream-ordered conversion populated
#    in order with its stream, 63d36b0); the two whose allocations are converted also under base
#    (d46afce, the thread waiting on Ember's stream). Two rounds, the order turning; a process each.
# 2. past_budget_speed.py 24 GiB, five passes, JAX cuda_async and CuPy's MemoryAsyncPool under head
#    and base (ab-49 call 2 had JAX cuda_async at 0.31-0.34 s a pass against 0.24 for its platform
#    allocator). Two rounds.
# 3. Every GPU test at head.
source tools/bench/device-call.sh c49-4
mkdir -p "$R/ops" "$R/speed"
NP=XLA_PYTHON_CLIENT_PREALLOCATE=false
TA=PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
JA=XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async
variants=(
  "torch-caching plain torch"   "torch-caching head torch"
  "torch-async plain torch $TA" "torch-async head torch $TA" "torch-async base torch $TA"
  "jax-bfc plain jax $NP"       "jax-bfc head jax $NP"
  "jax-platform plain jax XLA_PYTHON_CLIENT_ALLOCATOR=platform" "jax-platform head jax XLA_PYTHON_CLIENT_ALLOCATOR=platform"
  "jax-cuda-async plain jax $NP $JA" "jax-cuda-async head jax $NP $JA" "jax-cuda-async base jax $NP $JA"
)
ops() { # round label lib framework env...
  local round=$1 label=$2 lib=$3 fw=$4; shift 4
  time_left 230 || return 0
  local name=$label-$lib-$round out
  out=$R/ops/$name; stage "$name"
  local cmd=(python3 tools/bench/torch_tiny_ops.py 20 alloc)
  [ "$fw" = jax ] && cmd=(python3 tools/bench/jax_tiny_ops.py 20)
  if [ "$lib" != plain ]; then
    use "$lib"
    env "$@" timeout 60 "$run" --driver real --budget 16G --manage-all 1 --log info --stats "$out.stats.json" -- \
      "${cmd[@]}" >"$out.json" 2>"$out.err"
  else
    env "$@" timeout 60 "${cmd[@]}" >"$out.json" 2>"$out.err"
  fi
  echo "rc $?" >>"$out.err"
  echo "$name $(tail -n 1 "$out.json" | cut -c1-200) $(grep -o 'allocations by entry point.*' "$out.err" | cut -c1-160)"
}
turned() { # prints the variants of round $1, the order turning
  local -n list=$2
  if [ "$1" = 0 ]; then printf '%s\n' "${list[@]}"; else printf '%s\n' "${list[@]}" | tac; fi
}
for round in 0 1; do
  while read -r v; do
    # shellcheck disable=SC2086 # each variant's words
    ops $round $v
  done < <(turned $round variants)
  pack
done
speeds=("jax-cuda-async head jax $NP $JA" "jax-cuda-async base jax $NP $JA" "cupy-async head cupy-async" "cupy-async base cupy-async")
for round in 0 1; do
  while read -r label lib fw envs; do
    time_left 200 || break
    out=$R/speed/$label-$lib-$round; stage "speed $label-$lib-$round"; use "$lib"
    # shellcheck disable=SC2086 # the variant's settings, a word each
    env $envs PAST_BUDGET_VARIANT="$label-$lib" timeout 90 "$run" --driver real --mode adaptive --budget 16G --manage-all 1 \
      --log info --stats "$out.stats.json" -- python3 tools/bench/past_budget_speed.py "$fw" 24576 5 >"$out.json" 2>"$out.err"
    echo "rc $?" >>"$out.err"
    echo "$label-$lib-$round $(tail -n 1 "$out.json" | cut -c1-300)"
  done < <(turned $round speeds)
  pack
done
use head
stage "gpu tests"
(cd build && EMBER_GPU_TIMEOUT=60 EMBER_GPU_VERBOSE=1 timeout $((call_seconds - SECONDS - 15)) ctest -L gpu --output-on-failure -V >"$R/gpu-tests.log" 2>&1)
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout" "$R/gpu-tests.log" | head -30
finish
