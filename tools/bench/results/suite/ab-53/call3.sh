#!/usr/bin/env bash
# Session 57, call 3, at the head: cuMemGetAddressRange and the range pointer attributes in a split answer the whole allocation. Pack with
# EMBER_PACK_TESTS=gpu and EMBER_PACK_KEEP=ember-vmm-host-probe; carry build-gpu. 1. ember-vmm-host-probe
# without Ember, for the ranges the driver gives around an address in each of two handles mapped side by
# side (cuMemGetAddressRange and the pointer attributes); 2. every GPU test at the defaults (the pointer
# attributes are now hooked).
source tools/bench/device-call.sh c53-3
stage "vmm-host probe"
timeout 120 build/bin/ember-vmm-host-probe 1073741824 >"$R/vmm-host-probe.json" 2>"$R/vmm-host-probe.err"
echo "rc $?" >>"$R/vmm-host-probe.err"
python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['vmm-split']; print({k: v for k, v in d.items() if k.startswith('range')})" \
  "$R/vmm-host-probe.json" || tail -5 "$R/vmm-host-probe.err"
pack
stage "gpu tests at the defaults"
(cd build && EMBER_GPU_TIMEOUT=60 EMBER_GPU_VERBOSE=1 timeout 280 ctest -L gpu --output-on-failure -V \
  >"$R/gpu-tests.log" 2>&1)
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|peak" "$R/gpu-tests.log" | head -20
finish
