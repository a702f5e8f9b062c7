#!/usr/bin/env bash
# session 25, call 1: do settled launches (0d16c52) take Ember's share out of cudaLaunchKernel on the GPU?
# op_profile.py (ab-24/src) over hf-mixtral 8x1b-12 at 0.5x: without Ember, Ember off, then static and
# adaptive under the head's shim (settled) and under 97d81cf's (before it; build-gpu/lib-97d81cf), in turn,
# each one process; then token generation at 0.5x in rounds (suite.sh hf, the head's shim, two rounds of a
# process per variant forking three children).
set -uo pipefail
here=$PWD
source tools/bench/device-unpack.sh
export EMBER_PREBUILT=1 EMBER_BUILD=$here/build
R=/tmp/c1; mkdir -p $R/suite && cp tools/bench/results/suite/ab-23/seed/probe.json tools/bench/results/suite/ab-23/seed/sparse-probe.json $R/suite/
pack() { tar -C $R -czf "$OUT/c1.tar.gz" .; }
run=$here/build/bin/ember-run
old=$here/build/lib-97d81cf/libember.so
prof() { (cd tools/bench && timeout 70 "$@" python3 results/suite/ab-24/src/op_profile.py mixtral 8x1b-12 8); }
for v in none off static-head adaptive-head static-97d81cf adaptive-97d81cf; do
  echo "== [$SECONDS s] profile $v" >>$R/progress.log
  case $v in
    none) prof env >$R/prof-$v.json 2>$R/prof-$v.log ;;
    off) prof $run --driver real --mode off -- >$R/prof-$v.json 2>$R/prof-$v.log ;;
    *-head) prof $run --driver real --mode ${v%-head} --manage-all 1 --budget 16G --stats $R/prof-$v.stats.json -- >$R/prof-$v.json 2>$R/prof-$v.log ;;
    *-97d81cf) prof $run --shim $old --driver real --mode ${v%-97d81cf} --manage-all 1 --budget 16G --stats $R/prof-$v.stats.json -- >$R/prof-$v.json 2>$R/prof-$v.log ;;
  esac
  pack
done
python3 - $R <<'PY'
import json, sys, os
for v in ("none", "off", "static-head", "adaptive-head", "static-97d81cf", "adaptive-97d81cf"):
    try:
        r = json.load(open(os.path.join(sys.argv[1], f"prof-{v}.json")))
    except Exception as e:
        print(v, "failed", e); continue
    ops = {o["name"]: o for o in r["ops"]}
    k = ops.get("cudaLaunchKernel")
    per = k["self_cpu_us"] / k["count"] if k else None
    print(v, [round(w, 4) for w in r["walls"]], "cudaLaunchKernel us/launch", per and round(per, 2), k and k["count"])
PY
for v in static-head adaptive-head; do grep -o '"launches_settled": [0-9]*' $R/prof-$v.stats.json; done
echo "== [$SECONDS s] hf-mixtral rounds" >>$R/progress.log
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=0.5 EMBER_SUITE_VARIANTS="resident off static adaptive" EMBER_HF_ROUNDS=2 \
  EMBER_HF_PROCESSES=3 EMBER_BENCH_RUNS=5 EMBER_SUITE_SKIP='hf-llama-*' timeout 330 bash tools/bench/suite.sh hf >$R/hf-mixtral.log 2>&1
echo "== [$SECONDS s] done" >>$R/progress.log
pack
python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(r.get('bench'), r.get('variant'), round(r.get('seconds') or 0,4), r.get('processes_seconds') or r.get('runs_seconds'), r.get('error'))
" $R/suite/suite.jsonl
cat $R/progress.log
