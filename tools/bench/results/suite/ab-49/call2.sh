#!/usr/bin/env bash
# Session 53, call 2, on whichever card comes. Pack with EMBER_PACK_TESTS=gpu; carry build-gpu.
# 1. Every GPU test at 7923e01 (cuMemAllocAsync converts only from a convertible current pool; a
#    pool's allocation into a captured stream is left uncounted).
# 2. How fast framework arrays run past the budget (tools/bench/past_budget_speed.py): 24 GiB of
#    integer arrays, five passes x = 3x + 1, everything resident (no Ember) against ember-run
#    --budget 16G --manage-all 1, adaptive, with each allocator: JAX's BFC pool (cuMemCreate, past
#    the budget made in host memory and never promoted), its platform allocator and cuda_async
#    (converted and placed); PyTorch's caching allocator and its expandable segments; CuPy's pool.
#    Two rounds, the order turning; each process's JSON line, stderr and statistics kept.
source tools/bench/device-call.sh c49-2
stage "gpu tests"
(cd build && EMBER_GPU_TIMEOUT=60 EMBER_GPU_VERBOSE=1 timeout 300 ctest -L gpu --output-on-failure -V >"$R/gpu-tests.log" 2>&1)
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout" "$R/gpu-tests.log" | head -30
pack
MIB=24576 PASSES=5
speed() { # round label ember(0/1) framework env...
  local round=$1 label=$2 ember=$3 fw=$4; shift 4
  time_left 70 || return 0
  stage "$label-$round"
  local out=$R/speed/$label-$round; mkdir -p "$R/speed"
  if [ "$ember" = 1 ]; then
    env "$@" PAST_BUDGET_VARIANT="$label" timeout 150 "$run" --driver real --mode adaptive --budget 16G --manage-all 1 \
      --log info --stats "$out.stats.json" -- python3 tools/bench/past_budget_speed.py "$fw" $MIB $PASSES >"$out.json" 2>"$out.err"
  else
    env "$@" PAST_BUDGET_VARIANT="$label" timeout 150 python3 tools/bench/past_budget_speed.py "$fw" $MIB $PASSES >"$out.json" 2>"$out.err"
  fi
  echo "rc $?" >>"$out.err"
  tail -n 1 "$out.json" | cut -c1-400
  pack
}
NP=XLA_PYTHON_CLIENT_PREALLOCATE=false
variants=(
  "jax-resident 0 jax $NP"
  "jax-bfc 1 jax $NP"
  "jax-platform 1 jax $NP XLA_PYTHON_CLIENT_ALLOCATOR=platform"
  "jax-cuda-async 1 jax $NP XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async"
  "torch-resident 0 torch"
  "torch-converted 1 torch"
  "torch-expandable 1 torch PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
  "cupy-resident 0 cupy"
  "cupy-converted 1 cupy"
)
for round in 0 1; do
  if [ $round = 0 ]; then order=("${variants[@]}"); else order=(); for ((i=${#variants[@]}-1; i>=0; i--)); do order+=("${variants[i]}"); done; fi
  # shellcheck disable=SC2086 # each variant's words
  for v in "${order[@]}"; do speed $round $v; done
done
for f in "$R"/speed/*.stats.json; do
  python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
g = d['devices'][0]
print(sys.argv[1].split('/')[-1], 'peak', g['peak_bytes'] >> 20, 'MiB of high', g['high_bytes'] >> 20, 'vmm on host', g.get('bytes_vmm_on_host', 0) >> 20, 'MiB')
" "$f"
done
finish
