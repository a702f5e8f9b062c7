#!/usr/bin/env bash
# Session 58, call 1, at the head (4489ce4's split mend and the pools' usage attributes, never yet on a GPU; torch_prog now checks memory_allocated()). Pack with EMBER_PACK_TESTS=gpu;
# carry build-gpu. 1. every GPU test at the defaults; 2. on an H200 (the matrix's card) only, token
# generation at 1.5x under resident, static and adaptive, a process each: the matrix's H200 records of it
# predate session 50's background touches, and the model initialisation criterion reads them; 3. while
# time is left, JAX 24 GiB past a 16 GiB budget with its preallocation asked for (JAX's own default,
# which the doors other than ember-run leave set: one cuMemCreate of 75% of the card, now split at the
# budget where Ember's share of host memory has room) against preallocation off, a process each.
source tools/bench/device-call.sh c54-1
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
