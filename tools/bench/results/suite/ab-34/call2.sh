#!/usr/bin/env bash
# session 34, call 2, at the head. (1) ember-readmostly-probe (1 GiB) with the mapped-read sweep: a kernel of
# fewer blocks reads mapped memory at less than the link (llama.cpp's kernels draw 43 GB/s), and beside it a
# read-mostly prefetch of another GiB: whether the copy engine adds what the kernel leaves of the link. (2)
# static and adaptive at 1.5x, three rounds of a process each in turn, the order turning each round, for the
# kernels whose adaptive records predate 5183824: radix (call 1's one process made adaptive 1.07 s against
# static's 1.01 record), pathfinder, nw, cnn, kmeans. The rounds stop at 420 s.
source tools/bench/device-call.sh c2
stage "readmostly probe"
timeout 60 build/bin/ember-readmostly-probe $((1 << 30)) >"$R/readmostly-probe.json" 2>"$R/readmostly-probe.err"
echo "rc $?" >>"$R/readmostly-probe.err"
pack
early() { [ "$SECONDS" -lt "${1:-420}" ]; }
one() { # workload variant round
  local out=$R/$1-$2-$3
  mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=$2 EMBER_SUITE_ONLY=$1 EMBER_SUITE_TIMEOUT=60 \
    timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  pack
}
for round in 0 1 2; do
  order=(static adaptive)
  [ $((round % 2)) = 1 ] && order=(adaptive static)
  for w in radix pathfinder nw cnn kmeans; do
    for v in "${order[@]}"; do
      early || continue
      stage "$w $v round $round"
      one "$w" "$v" "$round"
    done
  done
done
stage done
pack
for f in "$R"/*-*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('d2h_bytes'), r.get('error'))
" "$f"
done
cat "$R/readmostly-probe.json" "$R/readmostly-probe.err" "$R/progress.log"
