#!/usr/bin/env bash
# session 30, call 4: star at 1.5x under adaptive, the head (small tables read densely take the margin above the
# high watermark at their launch, 3ab2f81, and are the last victims of all, so that reclamation keeps star's
# per-group sums, 430268f) against a782b68 (the base), five rounds of a process each in turn, traced with EMBER_LOG=debug.
# Call 2: the margin alone made first runs 0.90-0.91 s in two processes and 10.7-11.1 s in two, each of those
# two having demoted the sums (the base 3.51-3.67 s). Call 3, the sums last of the unprotected: 0.86-0.88 s in
# three, 10.9 s in one, the sums gone beside the only column regions out of their grace; now they are last of all.
source tools/bench/device-call.sh c4
cp build/lib/libember.so build/lib-head.so
cp build/lib-base/libember.so build/lib-base.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
for round in 0 1 2 3 4; do
  for v in head base; do
    [ $((round % 2)) = 1 ] && v=$([ $v = base ] && echo head || echo base) # the order turns each round
    time_left 40 || continue
    stage "star adaptive $v round $round"
    out=$R/star-$v-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    use $v
    EMBER_LOG=debug EMBER_SUITE_TRACE=star-1.5-adaptive EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 \
      EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_ONLY=star EMBER_SUITE_TIMEOUT=60 timeout 90 \
      bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
    pack
  done
done
stage done
pack
for f in "$R"/*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('error'))
" "$f"
done
cat "$R/progress.log"
