#!/usr/bin/env bash
# Session 52, call 10. Pack with EMBER_PACK_TESTS=0; carry build-gpu. Which entry points do the
# stream-ordered allocators take: CuPy's MemoryAsyncPool and JAX's cuda_async allocator, under
# tests/gpu/past_budget.py (1536 MiB alive) past a 1 GiB budget with manage-all, and without Ember?
source tools/bench/device-call.sh c48-10
one() { # label env... -- framework
  local label=$1; shift
  local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  stage "$label"
  env "${envs[@]}" timeout 120 python3 tests/gpu/past_budget.py "$1" 1536 >"$R/$label.out" 2>"$R/$label.err"
  echo "rc $?" >>"$R/$label.err"
  env "${envs[@]}" timeout 120 "$run" --driver real --mode adaptive --budget 1G --manage-all 1 --log info \
    --stats "$R/$label.stats.json" -- python3 tests/gpu/past_budget.py "$1" 1536 >"$R/$label-ember.out" 2>"$R/$label-ember.err"
  echo "rc $?" >>"$R/$label-ember.err"
  cmp -s "$R/$label.out" "$R/$label-ember.out" && echo "$label: same stdout" || echo "$label: stdout differs"
  grep -h "allocations by entry point\|at exit: peak\|warn\|rc " "$R/$label.err" "$R/$label-ember.err" | cut -c1-300
  pack
}
one cupy-async -- cupy-async
one jax-cuda-async XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async XLA_PYTHON_CLIENT_PREALLOCATE=false -- jax
finish
