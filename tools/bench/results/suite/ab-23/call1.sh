#!/usr/bin/env bash
# session 23, call 1: the GPU tests; ember-promote-probe (its new mincore_* and
# mapped_read_pages_made_by_* cases); pathfinder at 1.5x, resident, static and adaptive
# in one call (suite.sh records); loading at 1.5x with EMBER_POPULATE_HOST 0 and 1, static
# and adaptive, hf-llama 13b and hf-mixtral 8x1.5b, one hf_rounds.py process per variant
# and round, two rounds, the order turning (2 tokens, 1 generation).
set -uo pipefail
here=$PWD
source tools/bench/device-unpack.sh
R=/tmp/c1; mkdir -p $R
{ uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.used --format=csv; nproc; } >$R/machine.txt 2>&1
pack() { tar -C $R -czf "$OUT/c1.tar.gz" .; }
echo "== [$SECONDS s] ctest" >>$R/progress.log
(cd build && LD_LIBRARY_PATH=$PWD/devlibs timeout 150 ctest -L gpu --output-on-failure >$R/ctest-gpu.log 2>&1); tail -3 $R/ctest-gpu.log >>$R/progress.log
echo "== [$SECONDS s] promote-probe" >>$R/progress.log
timeout 90 build/bin/ember-promote-probe $((4 << 30)) >$R/promote-probe.json 2>$R/promote-probe.log; echo "rc $?" >>$R/promote-probe.log
pack
echo "== [$SECONDS s] pathfinder 1.5x" >>$R/progress.log
EMBER_PREBUILT=1 EMBER_BUILD=$here/build EMBER_RESULTS=$R/suite EMBER_SUITE_ONLY=pathfinder EMBER_SUITE_SCALES=1.5 \
  EMBER_SUITE_VARIANTS="resident static adaptive" timeout 150 bash tools/bench/suite.sh kernels >$R/pathfinder.log 2>&1
pack
run=$here/build/bin/ember-run
variant_cmd() { # VARIANT STATS: static-pop0 ... adaptive-pop1
  echo "$run --driver real --budget 16G --manage-all 1 --mode ${1%-pop*} --set EMBER_POPULATE_HOST=${1#*-pop} --stats $2 --"
}
rounds() { # NAME ROUNDS "VARIANTS" ARCH SIZE TOKENS RUNS
  local name=$1 nr=$2; local -a vs=($3); shift 3
  echo "== [$SECONDS s] $name" >>$R/progress.log
  for ((r = 0; r < nr; r++)); do
    for ((i = 0; i < ${#vs[@]}; i++)); do
      local v=${vs[(i + r) % ${#vs[@]}]}
      [ $SECONDS -lt 540 ] || { echo "$name $v $r: not run, out of time" >>$R/progress.log; continue; }
      (cd tools/bench && timeout -k 5 60 $(variant_cmd $v $R/$name-$v-$r.stats.json) python3 hf_rounds.py $v $r 1 "$@" \
        >>$R/$name.jsonl 2>>$R/$name.log) || echo "$name $v $r: rc $?" >>$R/progress.log
    done
  done
  pack
}
rounds hf-llama-1.5-populate 2 "static-pop0 static-pop1 adaptive-pop0 adaptive-pop1" llama 13b 2 1
rounds hf-mixtral-1.5-populate 2 "static-pop0 static-pop1 adaptive-pop0 adaptive-pop1" mixtral 8x1.5b 2 1
python3 - $R/*.jsonl <<'PY' >>$R/progress.log
import json, sys, collections
for f in sys.argv[1:]:
    by = collections.defaultdict(list)
    for line in open(f):
        try: r = json.loads(line)
        except ValueError: continue
        by[r.get("variant")].append((r.get("load_seconds"), round(r.get("seconds", 0), 3)))
    for v, s in sorted(by.items()): print(f.split("/")[-1], v, s)
PY
echo "== [$SECONDS s] done" >>$R/progress.log
pack
cat $R/progress.log
