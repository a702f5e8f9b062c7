#!/usr/bin/env bash
# session 23, call 4: BFS at 0.5x, resident, static and adaptive, four processes each, a process per variant
# in turn (EMBER_SUITE_PROCESSES); then the matrix's unmeasured cells, token generation under mapped: both
# models at 1.5x (one process each) and at 0.5x (hf_rounds.py, 2 rounds of a process forking 2 children).
# The results start from ab-23/seed/: call 2's probes and the resident token-generation records, so the
# bounds of these records are made as the matrix's are.
set -uo pipefail
here=$PWD
source tools/bench/device-unpack.sh
export EMBER_PREBUILT=1 EMBER_BUILD=$here/build
R=/tmp/c4; mkdir -p $R/suite && cp tools/bench/results/suite/ab-23/seed/* $R/suite/
{ uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.used --format=csv; nproc; } >$R/machine.txt 2>&1
pack() { tar -C $R -czf "$OUT/c4.tar.gz" .; }
EMBER_RESULTS=$R/suite EMBER_SUITE_ONLY=bfs EMBER_SUITE_SCALES=0.5 EMBER_SUITE_VARIANTS="resident static adaptive" \
  EMBER_SUITE_PROCESSES=4 timeout 150 bash tools/bench/suite.sh kernels >$R/bfs.log 2>&1
pack
EMBER_RESULTS=$R/suite EMBER_SUITE_VARIANTS=mapped EMBER_SUITE_WALL=330 timeout 420 bash tools/bench/suite.sh hf >$R/hf.log 2>&1
pack
python3 -c "
import json
for l in open('$R/suite/suite.jsonl'):
    r=json.loads(l); print(r.get('bench'), r.get('scale'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('load_seconds'), r.get('error'))
"
cat $R/suite/progress.log
