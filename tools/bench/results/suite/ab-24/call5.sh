#!/usr/bin/env bash
# session 24, call 5: the shim with settled launches (0d16c52). The GPU tests; token generation at 0.5x,
# hf-mixtral in 2 rounds of a process per variant forking 3 children (as call 2 ran it at 0b823bd's shim),
# resident, off, static and adaptive; op_profile.py under static and adaptive (call 3's profile, for
# cudaLaunchKernel's time per launch); then hf-llama in 1 round of 3 children, as time allows.
set -uo pipefail
here=$PWD
source tools/bench/device-unpack.sh
export EMBER_PREBUILT=1 EMBER_BUILD=$here/build
R=/tmp/c5; mkdir -p $R/suite && cp tools/bench/results/suite/ab-23/seed/probe.json tools/bench/results/suite/ab-23/seed/sparse-probe.json $R/suite/
pack() { tar -C $R -czf "$OUT/c5.tar.gz" .; }
(cd build && LD_LIBRARY_PATH=$PWD/devlibs timeout 170 ctest -L gpu --output-on-failure >$R/ctest-gpu.log 2>&1)
tail -3 $R/ctest-gpu.log; pack
echo "== [$SECONDS s] hf-mixtral rounds" >>$R/progress.log
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=0.5 EMBER_SUITE_VARIANTS="resident off static adaptive" EMBER_HF_ROUNDS=2 \
  EMBER_HF_PROCESSES=3 EMBER_BENCH_RUNS=5 EMBER_SUITE_SKIP='hf-llama-*' timeout 300 bash tools/bench/suite.sh hf >$R/hf-mixtral.log 2>&1
pack
run=$here/build/bin/ember-run
for v in static adaptive; do
  echo "== [$SECONDS s] profile $v" >>$R/progress.log
  (cd tools/bench && timeout 60 $run --driver real --mode $v --manage-all 1 --budget 16G --stats $R/prof-$v.stats.json -- \
     python3 results/suite/ab-24/src/op_profile.py mixtral 8x1b-12 8 >$R/prof-$v.json 2>$R/prof-$v.log)
done
pack
echo "== [$SECONDS s] hf-llama round" >>$R/progress.log
mkdir -p $R/llama && cp $R/suite/probe.json $R/suite/sparse-probe.json $R/llama/
EMBER_RESULTS=$R/llama EMBER_SUITE_SCALES=0.5 EMBER_SUITE_VARIANTS="resident off static adaptive" EMBER_HF_ROUNDS=1 \
  EMBER_HF_PROCESSES=3 EMBER_BENCH_RUNS=5 EMBER_SUITE_SKIP='hf-mixtral-*' timeout 150 bash tools/bench/suite.sh hf >$R/hf-llama.log 2>&1
echo "== [$SECONDS s] done" >>$R/progress.log
pack
for f in $R/suite/suite.jsonl $R/llama/suite.jsonl; do python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(r.get('bench'), r.get('variant'), round(r.get('seconds') or 0,4), [round(x,3) for x in r.get('runs_seconds') or []], r.get('error'))
" $f; done
for v in static adaptive; do python3 -c "
import json,sys
r=json.load(open(sys.argv[1])); print(sys.argv[2], [round(w,4) for w in r['walls']], [(o['name'],o['count'],round(o['self_cpu_us'])) for o in r['ops'][:3]])
" $R/prof-$v.json $v; grep -o '"launches_settled": [0-9]*' $R/prof-$v.stats.json; done
cat $R/progress.log
