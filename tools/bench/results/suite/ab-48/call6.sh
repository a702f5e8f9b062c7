#!/usr/bin/env bash
# Session 52, call 6 (call 5 again: host memory now drops the request that a NIC may reach it, which call 5 showed PyTorch and XLA make). Pack with EMBER_PACK_TESTS=0; carry build-gpu. Can a CuPy, JAX or PyTorch program
# keep more arrays alive than Ember's budget? tests/gpu/past_budget.py (1536 MiB of arrays, all alive, three
# passes over them) plainly and under ember-run --budget 1G --manage-all 1, adaptive; JAX under its
# defaults, without preallocation, and with its platform allocator (an allocation per buffer). Each run's
# stdout, stderr and statistics are kept.
source tools/bench/device-call.sh c48-6
one() { # label env... -- framework
  local label=$1; shift
  local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  stage "$label"
  local t0=$SECONDS
  env "${envs[@]}" timeout 120 python3 tests/gpu/past_budget.py "$1" 1536 >"$R/$label.out" 2>"$R/$label.err"
  echo "rc $? in $((SECONDS - t0)) s" >>"$R/$label.err"
  env "${envs[@]}" timeout 120 "$run" --driver real --mode adaptive --budget 1G --manage-all 1 --log info \
    --stats "$R/$label.stats.json" -- python3 tests/gpu/past_budget.py "$1" 1536 >"$R/$label-ember.out" 2>"$R/$label-ember.err"
  echo "rc $? in $((SECONDS - t0)) s" >>"$R/$label-ember.err"
  cmp -s "$R/$label.out" "$R/$label-ember.out" && echo "$label: same stdout" || echo "$label: stdout differs"
  for e in "$R/$label.err" "$R/$label-ember.err"; do tail -n 3 "$e" | cut -c1-300; done
  pack
}
one torch -- torch
one cupy -- cupy
one jax-default -- jax
one torch-expandable PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True -- torch
one jax-noprealloc XLA_PYTHON_CLIENT_PREALLOCATE=false -- jax
one jax-platform XLA_PYTHON_CLIENT_ALLOCATOR=platform -- jax
one jax-fraction XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_PYTHON_CLIENT_MEM_FRACTION=4 -- jax
for f in "$R"/*.stats.json; do
  python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
g = d['devices'][0]
print(sys.argv[1].split('/')[-1], 'peak', g['peak_bytes'] >> 20, 'MiB of high', g['high_bytes'] >> 20, 'populated', g.get('bytes_populated', 0) >> 20, 'vmm on host', g.get('bytes_vmm_on_host', 0) >> 20, 'MiB', {k: (v['calls'], v['bytes'] >> 20, v['converted']) for k, v in d['entry_points'].items()})
" "$f"
done
finish
