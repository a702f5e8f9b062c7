#!/usr/bin/env bash
# Session 46. Pack with the tests; carry build-gpu.
# 1. ember-capture-probe with its fork cases made robust (call 1's probe stopped at the fifth: after
#    an end on the forked stream, its next call failed with 901), and a sixth (the forked stream
#    destroyed while the capture lasts); plainly and under Ember (manage-all, adaptive, 1 GiB),
#    case by case; then the GPU test gpu.capture_probe.
# 2. ember-pageable-probe again with two backings the GPU reaches without HMM (call 1 found none):
#    mmap'd huge pages registered with cuMemHostRegister, and host-located cuMemCreate memory.
source tools/bench/device-call.sh c43-2
stage "capture probe"
timeout 60 build/bin/ember-capture-probe >"$R/capture-probe.jsonl" 2>"$R/capture-probe.log"
echo "rc $?" >>"$R/capture-probe.log"
tail -6 "$R/capture-probe.jsonl"; cat "$R/capture-probe.log"
stage "capture probe under ember"
EMBER_MANAGE_ALL=1 timeout 60 "$run" --driver real --mode adaptive --budget 1G --log info -- \
  build/bin/ember-capture-probe >"$R/capture-probe-ember.jsonl" 2>"$R/capture-probe-ember.log"
python3 - "$R/capture-probe.jsonl" "$R/capture-probe-ember.jsonl" <<'PY' | tee "$R/capture-compare.txt"
import json, sys
a, b = ([json.loads(l) for l in open(f)] for f in sys.argv[1:])
diff = [(x, y) for x, y in zip(a, b) if x != y]
print(f"under ember: {len(a) - len(diff)} of {len(a)} cases as without Ember ({len(b)} run)")
for x, y in diff:
    print("  without:", x, "\n  under:  ", y)
PY
pack
stage "gpu.capture_probe"
(cd build && EMBER_GPU_TIMEOUT=60 timeout 120 ctest -R gpu.capture_probe --output-on-failure >"$R/gpu-tests.log" 2>&1)
tail -5 "$R/gpu-tests.log"
pack
stage "pageable probe"
timeout 150 build/bin/ember-pageable-probe >"$R/pageable-probe.json" 2>"$R/pageable-probe.log"
cat "$R/pageable-probe.json" "$R/pageable-probe.log"
finish
