#!/usr/bin/env bash
# Session 53, call 1 (ab-48 call 1 again), on an H200 only (the matrix's card; on another it exits at once). Pack with
# EMBER_PACK_TESTS=0; carry build-gpu. 1. hf-llama 13b and hf-mixtral 8x1.5b at 1.5x of the 16 GiB
# budget, resident and adaptive, one process each through suite.sh as the matrix's records are: their
# load_seconds (the criterion on model initialisation) with EMBER_POPULATE_ASYNC, on by default since
# session 50. 2. The matrix's one unmeasured cell, bitonic at 1.5x under mapped (ab-44/call2.sh), in
# what time is left.
source tools/bench/device-call.sh c49-1
grep -q H200 "$R/gpu.txt" || { stage "not an H200: nothing run"; finish; exit 0; }
out=$R/hf && mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
stage "hf at 1.5x, resident and adaptive"
EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS="resident adaptive" \
  EMBER_SUITE_TIMEOUT=90 timeout 260 bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
gzip -f "$out"/logs/*.log 2>/dev/null
python3 - "$out/suite.jsonl" <<'PY' | tee "$R/hf.txt"
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(r.get("bench"), r.get("variant"), "load", r.get("load_seconds"), "gen", r.get("seconds"), r.get("error", ""))
PY
pack
if time_left 200; then
  out=$R/bitonic-mapped && mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  stage "bitonic 1.5 mapped"
  EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=mapped EMBER_SUITE_ONLY=bitonic \
    EMBER_SUITE_TIMEOUT=$((call_seconds - SECONDS - 40)) timeout $((call_seconds - SECONDS - 20)) \
    bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
fi
finish
