#!/usr/bin/env bash
# session 25, call 3: the watermarks' new defaults (97/93, from Table 1's 90/85). The GPU tests; then at
# 1.5x of the 16 GiB budget, static and adaptive (one process each, suite.sh): llama.cpp 13B F16, hf-llama
# 13b and hf-mixtral 8x1.5b, then the kernels in the order of their distance from the bound, as time allows
# (EMBER_SUITE_WALL: a record that would start later is written as not run).
set -uo pipefail
here=$PWD
source tools/bench/device-unpack.sh
export EMBER_PREBUILT=1 EMBER_BUILD=$here/build
R=/tmp/c3; mkdir -p $R/suite && cp tools/bench/results/suite/ab-23/seed/probe.json tools/bench/results/suite/ab-23/seed/sparse-probe.json $R/suite/
pack() { tar -C $R -czf "$OUT/c3.tar.gz" .; }
(cd build && LD_LIBRARY_PATH=$PWD/devlibs timeout 150 ctest -L gpu --output-on-failure >$R/ctest-gpu.log 2>&1)
tail -3 $R/ctest-gpu.log; pack
echo "== [$SECONDS s] suite" >>$R/progress.log
wall=$((470 - SECONDS))
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS="static adaptive" EMBER_SUITE_TIMEOUT=80 \
  EMBER_SUITE_WALL=$wall EMBER_SUITE_ONLY="star kmeans bfs cnn nw radix pathfinder bitonic" \
  timeout $((wall + 90)) bash tools/bench/suite.sh llama hf kernels >$R/suite.log 2>&1
echo "== [$SECONDS s] done" >>$R/progress.log
pack
python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(r.get('bench'), r.get('variant'), round(r.get('seconds') or 0,4), r.get('runs_seconds'), r.get('bound_seconds'), r.get('error'))
" $R/suite/suite.jsonl
cat $R/progress.log $R/suite/progress.log
