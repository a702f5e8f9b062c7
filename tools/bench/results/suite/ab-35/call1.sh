#!/usr/bin/env bash
# Ready for the next session, not yet run. (1) ember-touch-probe (4 GiB) with madvise(MADV_POPULATE_WRITE):
# whether the kernel makes the driver's host pages faster than the host's touches (10.7 GB/s from eight
# threads in ab-34's call 6), and a kernel's write after. If it does, the shim's touches can use it
# (host_touch.c) and the build of a model past the budget (2.0 s against resident's 0.3-0.7, ab-34's call 4)
# shortens with it. (2) llama.cpp at 1.5x under adaptive, three more processes at the head: ab-34's call 7
# made 0.8996 of the link bound in two.
source tools/bench/device-call.sh c1
stage "touch probe"
timeout 90 build/bin/ember-touch-probe $((4 << 30)) >"$R/touch-probe.json" 2>"$R/touch-probe.err"
echo "rc $?" >>"$R/touch-probe.err"
pack
for round in 0 1 2; do
  [ "$SECONDS" -lt 400 ] || continue
  stage "llama adaptive round $round"
  out=$R/llama-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_TIMEOUT=90 \
    timeout $((530 - SECONDS)) bash tools/bench/suite.sh llama >"$out/suite.log" 2>&1
  pack
done
stage done
pack
cat "$R/touch-probe.json" "$R/touch-probe.err"
for f in "$R"/llama-*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('d2h_bytes'), r.get('error'))
" "$f"
done
cat "$R/progress.log"
