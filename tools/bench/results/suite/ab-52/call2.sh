#!/usr/bin/env bash
# Session 56, call 2: cuMemCreate allocations split at the budget (cfd10e5). Pack with EMBER_PACK_TESTS=gpu
# and EMBER_PACK_LIBS="base=8b7c1b4" (the library before the split), then copy build/bin/ember-vmm-host-probe
# into build-gpu/bin; carry build-gpu.
# 1. ember-vmm-host-probe 1 GiB with its vmm-split case (a GPU handle and a host handle side by side: may
#    one cuMemSetAccess and one cuMemUnmap span both; what cuMemRetainAllocationHandle gives in each half);
# 2. the GPU tests whose memory is cuMemCreate's (JAX's and PyTorch's expandable segments past the budget);
# 3. JAX 24 GiB past a 16 GiB budget (past_budget_speed.py, 3 passes, adaptive, manage-all, preallocation
#    off), the library before the split against the head, a process each, rounds in turned order;
#    then the head once at EMBER_LOG=debug for where each region went;
# 4. on an H200 only: the cells ab-51/call5.sh owed (hf at 1.5x resident and adaptive, bitonic at 1.5x mapped).
source tools/bench/device-call.sh c52-2
stage "vmm-host probe"
timeout 60 build/bin/ember-vmm-host-probe $((1 << 30)) >"$R/vmm-host-probe.json" 2>"$R/vmm-host-probe.err"
echo "rc $?" >>"$R/vmm-host-probe.err"
cut -c1-2500 "$R/vmm-host-probe.json"
stage "gpu tests of cuMemCreate memory"
(cd build && EMBER_GPU_TIMEOUT=60 EMBER_GPU_VERBOSE=1 timeout 200 ctest -L gpu -R "past_budget|jax" --output-on-failure -V \
  >"$R/gpu-tests.log" 2>&1)
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|split" "$R/gpu-tests.log" | head -20
pack
mkdir -p "$R/jax"
for lib in base head head base; do
  time_left 120 || break
  out=$R/jax/$lib-$SECONDS; use "$lib"; stage "jax 24 GiB under $lib"
  env -u XLA_PYTHON_CLIENT_PREALLOCATE PAST_BUDGET_VARIANT="jax-bfc-$lib" timeout 70 "$run" --driver real --mode adaptive \
    --budget 16G --manage-all 1 --log info --stats "$out.stats.json" -- python3 tools/bench/past_budget_speed.py jax 24576 3 \
    >"$out.json" 2>"$out.err"
  echo "rc $?" >>"$out.err"; gzip -f "$out.stats.json" 2>/dev/null
  echo "$lib: $(tail -n 1 "$out.json" | grep -o '"build_seconds.*median_pass_seconds": [0-9.]*') $(grep -c warn "$out.err") warnings"
  pack
done
use head
if time_left 120; then
  stage "jax regions at debug"
  env -u XLA_PYTHON_CLIENT_PREALLOCATE PAST_BUDGET_VARIANT=jax-regions timeout 70 "$run" --driver real --mode adaptive \
    --budget 16G --manage-all 1 --log debug -- python3 tools/bench/past_budget_speed.py jax 24576 1 \
    >"$R/jax-regions.json" 2>"$R/jax-regions.err"
  echo "rc $?" >>"$R/jax-regions.err"
  grep -o 'cuMemCreate of [0-9]* MiB[^:]*' "$R/jax-regions.err" | head -20
  grep -o 'cuMemCreate of [0-9]* MiB.*split.*' "$R/jax-regions.err" | head
  xz -f "$R/jax-regions.err"
  pack
fi
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
