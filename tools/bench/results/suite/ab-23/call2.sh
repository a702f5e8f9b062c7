#!/usr/bin/env bash
# session 23, call 2: llama.cpp at 0.5x (4b) in three rounds, a llama-bench process per variant in turn
# (suite.sh's new llama_rounds_records), with the call's probe for the bounds; then an A/B of the
# refresh's order on BFS and pathfinder at 0.5x, adaptive: the build's refresh ordered before the launch
# on its stream (A) against the same shim with that refresh unordered (B, lib-order-none/, built from
# this tree with EMBER_ORDER_NONE in refresh_after_host_phase; not committed), two pairs each (ab.sh).
set -uo pipefail
here=$PWD
source tools/bench/device-unpack.sh
R=/tmp/c2; mkdir -p $R
{ uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.used --format=csv; nproc; } >$R/machine.txt 2>&1
pack() { tar -C $R -czf "$OUT/c2.tar.gz" .; }
export EMBER_PREBUILT=1 EMBER_BUILD=$here/build
echo "== [$SECONDS s] probe, llama 0.5x rounds" >>$R/progress.log
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=0.5 timeout 300 bash tools/bench/suite.sh probe llama >$R/llama.log 2>&1
pack
ws=$((8 << 30))
for w in bfs pathfinder; do
  echo "== [$SECONDS s] A/B $w" >>$R/progress.log
  [ $SECONDS -lt 480 ] || { echo "$w: not run, out of time" >>$R/progress.log; continue; }
  timeout 120 bash tools/bench/ab.sh stream build/lib/libember.so none build/lib-order-none/libember.so 2 \
    -- --driver real --budget 16G --mode adaptive -- build/bin/ember-suite $w $ws 3 >$R/ab-$w.jsonl 2>$R/ab-$w.log
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); p=r['program'] or {}; print(sys.argv[2], r['label'], r['run'], r['wall_seconds'], p.get('runs_seconds'))
" $R/ab-$w.jsonl $w >>$R/progress.log 2>&1
  pack
done
grep -h "exit\|round" $R/suite/progress.log >>$R/progress.log 2>/dev/null
python3 -c "
import json
for l in open('$R/suite/suite.jsonl'):
    r=json.loads(l); print(r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('error'))
" >>$R/progress.log 2>&1
echo "== [$SECONDS s] done" >>$R/progress.log
pack
cat $R/progress.log
