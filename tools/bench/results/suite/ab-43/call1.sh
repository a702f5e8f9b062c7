#!/usr/bin/env bash
# Session 46. Pack with the tests (EMBER_PACK_TESTS unset); carry build-gpu.
# 1. Whether the GPU may reach pageable memory here (HMM), and ember-pageable-probe: how fast plain
#    mmap'd memory, with and without transparent huge pages, is made from 1, 8 and 16 threads against
#    managed memory's host pages, and what a kernel reads and writes of it, mapped and prefetched.
# 2. ember-capture-probe with its new fork cases (a capture drawn into a second stream by an
#    event, joined back or not): how each ends, and each stream's capture status after; then the
#    probe under Ember (manage-all, adaptive, 1 GiB), which must give the driver's results.
# 3. The GPU tests (ctest -L gpu), the capture tests among them.
# 4. On an H200 only (the matrix's card): pathfinder's stale cells (static and adaptive at 1.5x and
#    0.5x, three rounds, the order turning) and BFS's at 1.5x, then bench: launch-overhead at the defaults, three rounds.
source tools/bench/device-call.sh c43-1
stage "addressing mode"
{ nvidia-smi -q | grep -i -A1 "addressing"; uname -r; cat /sys/kernel/mm/transparent_hugepage/enabled \
    /sys/kernel/mm/transparent_hugepage/defrag; } >"$R/addressing.txt" 2>&1
cat "$R/addressing.txt"
stage "capture probe"
timeout 60 build/bin/ember-capture-probe >"$R/capture-probe.jsonl" 2>"$R/capture-probe.log"
tail -6 "$R/capture-probe.jsonl"
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
stage "pageable probe"
timeout 150 build/bin/ember-pageable-probe >"$R/pageable-probe.json" 2>"$R/pageable-probe.log"
cat "$R/pageable-probe.json" "$R/pageable-probe.log"
pack
stage "gpu tests"
(cd build && EMBER_GPU_TIMEOUT=60 timeout 240 ctest -L gpu --output-on-failure >"$R/gpu-tests.log" 2>&1)
tail -15 "$R/gpu-tests.log"
pack
if grep -q H200 "$R/gpu.txt"; then
  cell() { # workload scale variant round
    local out=$R/$1-$2-$3-$4
    stage "$1 $2 $3 round $4"
    mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=$2 EMBER_SUITE_VARIANTS=$3 \
      EMBER_SUITE_ONLY=$1 EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
    gzip -f "$out"/logs/*.log 2>/dev/null
    pack
  }
  for round in 0 1 2; do
    for scale in 1.5 0.5; do
      order="static adaptive"; [ $round = 1 ] && order="adaptive static"
      for v in $order; do time_left 170 && cell pathfinder $scale $v $round; done
    done
    for v in $order; do time_left 170 && cell bfs 1.5 $v $round; done
  done
  time_left 150 && { stage "launch overhead"; mkdir -p "$R/overhead/logs" && cp "$R"/suite/*probe.json "$R/overhead/";
    EMBER_RESULTS=$R/overhead EMBER_OVERHEAD_ROUNDS=3 timeout 140 bash tools/bench/suite.sh overhead >"$R/overhead/suite.log" 2>&1; pack; }
fi
finish
