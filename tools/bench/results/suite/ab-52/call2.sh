#!/usr/bin/env bash
# Session 56, call 2. Pack with EMBER_PACK_TESTS=0; carry build-gpu. 1. ember-vmm-host-probe 1 GiB, now
# with its vmm-split case (a GPU handle and a host handle side by side: may one cuMemSetAccess and one
# cuMemUnmap span both, and what does cuMemRetainAllocationHandle give in each half); 2. JAX's pool past
# a 16 GiB budget at EMBER_LOG=debug, for the sizes of the regions made in host memory; 3. on an H200
# only: the cells ab-51/call5.sh owed (hf at 1.5x resident and adaptive, bitonic at 1.5x mapped).
source tools/bench/device-call.sh c52-2
stage "vmm-host probe"
timeout 60 build/bin/ember-vmm-host-probe $((1 << 30)) >"$R/vmm-host-probe.json" 2>"$R/vmm-host-probe.err"
echo "rc $?" >>"$R/vmm-host-probe.err"
cut -c1-2000 "$R/vmm-host-probe.json"
stage "jax regions"
env -u XLA_PYTHON_CLIENT_PREALLOCATE PAST_BUDGET_VARIANT=jax-regions timeout 65 "$run" --driver real --mode adaptive \
  --budget 16G --manage-all 1 --log debug -- python3 tools/bench/past_budget_speed.py jax 24576 1 \
  >"$R/jax-regions.json" 2>"$R/jax-regions.err"
echo "rc $?" >>"$R/jax-regions.err"
grep -o 'cuMemCreate of [0-9]* MiB[^:]*' "$R/jax-regions.err" | sort | uniq -c
gzip -f "$R/jax-regions.err"
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
