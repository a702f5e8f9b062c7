#!/usr/bin/env bash
# session 24, call 2: token generation at 0.5x for both transformers models, at this session's shim (the
# shim is 0b823bd's), resident, off (Ember passing through), static and adaptive: 2 rounds of a process per
# variant in turn, each forking 3 measured children (6 per variant; ab-22's records had 4), 5 runs each.
set -uo pipefail
here=$PWD
source tools/bench/device-unpack.sh
export EMBER_PREBUILT=1 EMBER_BUILD=$here/build
R=/tmp/c2; mkdir -p $R/suite && cp tools/bench/results/suite/ab-23/seed/probe.json tools/bench/results/suite/ab-23/seed/sparse-probe.json $R/suite/
{ uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.used --format=csv; nproc; } >$R/machine.txt 2>&1
pack() { tar -C $R -czf "$OUT/c2.tar.gz" .; }
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=0.5 EMBER_SUITE_VARIANTS="resident off static adaptive" EMBER_HF_ROUNDS=2 \
  EMBER_HF_PROCESSES=3 EMBER_BENCH_RUNS=5 timeout 570 bash tools/bench/suite.sh hf >$R/hf.log 2>&1
pack
python3 -c "
import json
for l in open('$R/suite/suite.jsonl'):
    r=json.loads(l); print(r.get('bench'), r.get('scale'), r.get('variant'), r.get('seconds'), r.get('run_seconds'), r.get('processes'), r.get('error'))
"
cat $R/suite/progress.log
