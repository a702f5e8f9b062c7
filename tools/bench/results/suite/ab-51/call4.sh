#!/usr/bin/env bash
# Session 55, call 4, on the H100 that call 3 found: hf-llama 13b and hf-mixtral 8x1.5b at 1.5x of the
# 16 GiB budget, resident and adaptive, one process each through suite.sh (load_seconds: the model's
# build and draw; tokens), at the head, against ab-46's H100 figures. Pack as call 3.
# (EMBER_CALL_SUFFIX names a second run of it, c51-4-again: call5.sh.)
source tools/bench/device-call.sh "c51-4${EMBER_CALL_SUFFIX:-}"
out=$R/hf && mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
stage "hf at 1.5x, resident and adaptive"
EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS="resident adaptive" \
  EMBER_SUITE_TIMEOUT=90 timeout $((call_seconds - 20)) bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
gzip -f "$out"/logs/*.log 2>/dev/null
python3 - "$out/suite.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(r.get("bench"), r.get("variant"), "load", r.get("load_seconds"), "gen", r.get("seconds"), r.get("error", ""))
PY
finish
