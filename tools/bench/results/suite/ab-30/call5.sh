#!/usr/bin/env bash
# session 30, call 5 (ready, not run: the device time ran out): the demote probe's two new cases (a kernel that
# looks words up at random in mapped memory and adds to sums with atomics, as star's queries do; a kernel on the
# legacy default stream, where star launches): does a demotion on Ember's stream wait for either? Then star at
# 1.5x under adaptive: the branch try/margin-to-high (after the margin, reclamation goes back under the high
# watermark and no further), its library carried as build-gpu/lib-try/libember.so (git worktree add /tmp/wt
# try/margin-to-high, build its ember target, copy the library there after device-pack.sh), against the head
# (down to the low watermark: second runs 0.59 s against the parent's 0.56 in call 4), three rounds of a
# process each in turn.
source tools/bench/device-call.sh c5
stage "demote probe"
timeout 60 build/bin/ember-demote-probe $((2 << 30)) >"$R/demote-probe.json" 2>"$R/demote-probe.err"
echo "rc $?" >>"$R/demote-probe.err"
pack
cp build/lib/libember.so build/lib-head.so
cp build/lib-try/libember.so build/lib-try.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
for round in 0 1 2; do
  for v in head try; do
    [ $((round % 2)) = 1 ] && v=$([ $v = try ] && echo head || echo try) # the order turns each round
    time_left 30 || continue
    stage "star adaptive $v round $round"
    out=$R/star-$v-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    use $v
    EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_ONLY=star \
      EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
    pack
  done
done
use head
stage done
pack
for f in "$R"/*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('seconds'), r.get('runs_seconds'), r.get('d2h_bytes'), r.get('error'))
" "$f"
done
cat "$R/demote-probe.json" "$R/demote-probe.err" "$R/progress.log"
