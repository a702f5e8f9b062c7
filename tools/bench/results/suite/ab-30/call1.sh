#!/usr/bin/env bash
# session 30, call 1: a small table read densely may take the margin between the high watermark and the budget
# at its launch (the head) against its parent a782b68 (the base, build/lib-base/libember.so, carried), star at
# 1.5x under adaptive, three rounds of a process each in turn; the head's last process traced with EMBER_LOG=debug.
# Star's first run waited 2.4-3.4 s for the demotion that made its tables' room (ab-28 call 8, ab-29 calls 1-3).
# Then the GPU tests under the head's defaults, and the 1.5x static records in three processes where only one was.
source tools/bench/device-call.sh c1
cp build/lib/libember.so build/lib-head.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
[ -f build/lib-base/libember.so ] && cp build/lib-base/libember.so build/lib-base.so
for round in 0 1 2; do
  for v in base head; do
    [ $((round % 2)) = 1 ] && v=$([ $v = base ] && echo head || echo base) # the order turns each round
    time_left 40 || continue
    stage "star adaptive $v round $round"
    out=$R/star-$v-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    use $v
    trace=(); [ $round = 2 ] && [ $v = head ] && trace=(EMBER_LOG=debug EMBER_SUITE_TRACE=star-1.5-adaptive)
    env "${trace[@]}" EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_ONLY=star \
      EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
    pack
  done
done
use head
if time_left 150; then
  stage "gpu tests"
  (cd build && LD_LIBRARY_PATH=$PWD/devlibs timeout 140 ctest -L gpu --output-on-failure >"$R/ctest-gpu.log" 2>&1)
  tail -3 "$R/ctest-gpu.log"; pack
fi
for what in kmeans nw cnn radix; do
  time_left 70 || continue
  stage "$what static, 3 processes"
  EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=static EMBER_SUITE_PROCESSES=3 \
    EMBER_SUITE_ONLY=$what EMBER_SUITE_TIMEOUT=40 timeout 100 bash tools/bench/suite.sh kernels >"$R/suite-$what.log" 2>&1
  pack
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
grep -h "at exit\|wanted" "$R"/star-*/logs/*.log | cut -c1-220 | head -30
cat "$R/progress.log"
