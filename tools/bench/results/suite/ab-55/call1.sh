#!/usr/bin/env bash
# Session 59, call 1, at the head (ab-54's call 1 never ran: the pools' usage attributes and torch_prog's
# memory_allocated() check, never yet on a GPU; a split retained after its last release). Pack with
# EMBER_PACK_TESTS=gpu EMBER_PACK_KEEP="ember-suite ember-vmm-host-probe"; carry build-gpu.
# 1. ember-vmm-host-probe 1 GiB: what a retain gives in a half released while mapped (the split's new
# answer expects the driver's handle unchanged); 2. every GPU test; 3. on an H200 (the matrix's card) only,
# token generation at 1.5x under resident, static and adaptive (the matrix's H200 records predate session
# 50's background touches; the initialisation criterion reads them); 4. while time is left, JAX 24 GiB past
# a 16 GiB budget with its preallocation asked for, against off (by the code's rules: split on an 80 GB
# card, whole on the GPU with a warning on the H200).
source tools/bench/device-call.sh c55-1
stage "vmm-host probe"
timeout 120 build/bin/ember-vmm-host-probe 1073741824 >"$R/vmm-host-probe.json" 2>"$R/vmm-host-probe.err"
echo "rc $?" >>"$R/vmm-host-probe.err"
python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['vmm-split']; print({k: v for k, v in d.items() if k.startswith('retain')})" \
  "$R/vmm-host-probe.json" || tail -5 "$R/vmm-host-probe.err"
gpu_tests 280
grep -q H200 "$R/gpu.txt" && time_left 200 && hf_cells "resident static adaptive"
mkdir -p "$R/jax"
for pre in true false; do
  time_left 60 || break
  out=$R/jax/prealloc-$pre-$SECONDS; stage "jax 24 GiB, preallocation $pre"
  env XLA_PYTHON_CLIENT_PREALLOCATE=$pre PAST_BUDGET_VARIANT="jax-prealloc-$pre" timeout 70 "$run" --driver real \
    --mode adaptive --budget 16G --manage-all 1 --log info --stats "$out.stats.json" -- \
    python3 tools/bench/past_budget_speed.py jax 24576 3 >"$out.json" 2>"$out.err"
  echo "rc $?" >>"$out.err"
  peak=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['devices'][0]['peak_bytes']>>20, 'MiB peak,', d['devices'][0]['bytes_vmm_on_host']>>20, 'MiB vmm on host')" "$out.stats.json" 2>/dev/null)
  gzip -f "$out.stats.json" 2>/dev/null
  echo "jax prealloc $pre: $(tail -n 1 "$out.json" | grep -o '"build_seconds.*median_pass_seconds": [0-9.]*') $peak $(grep -c warn "$out.err") warnings"
  grep -m3 -i "warn\|split" "$out.err" | cut -c1-300
  pack
done
finish
