#!/usr/bin/env bash
# session 24, call 3: why Ember's managed variants are slower at 0.5x in launch-bound token generation
# (call 2: hf-mixtral static 0.145 s and adaptive 0.113 against resident 0.102 and off 0.096). copy_probe
# (ab-24/src, built here, carried in build-gpu/): small copies, memsets and pointer queries on managed
# memory resident on the GPU against device memory, without Ember and under Ember static manage-all;
# then op_profile.py (ab-24/src): hf-mixtral 8x1b-12's host time per op over three generations of 8
# tokens, without Ember, Ember off, static and adaptive (manage-all, 16G).
set -uo pipefail
here=$PWD
source tools/bench/device-unpack.sh
R=/tmp/c3; mkdir -p $R
pack() { tar -C $R -czf "$OUT/c3.tar.gz" .; }
run=$here/build/bin/ember-run
build/copy_probe >$R/copy-none.jsonl 2>&1
$run --driver real --mode static --manage-all 1 --budget 16G -- build/copy_probe >$R/copy-static.jsonl 2>&1
pack
prof() { (cd tools/bench && timeout 100 "$@" python3 results/suite/ab-24/src/op_profile.py mixtral 8x1b-12 8); }
for v in resident off static adaptive; do
  echo "== [$SECONDS s] $v" >>$R/progress.log
  case $v in
    resident) prof env >$R/prof-$v.json 2>$R/prof-$v.log ;;
    off) prof $run --driver real --mode off -- >$R/prof-$v.json 2>$R/prof-$v.log ;;
    *) prof $run --driver real --mode $v --manage-all 1 --budget 16G -- >$R/prof-$v.json 2>$R/prof-$v.log ;;
  esac
  pack
done
echo "== [$SECONDS s] done" >>$R/progress.log; pack
paste $R/copy-none.jsonl $R/copy-static.jsonl
python3 - $R <<'PY'
import json, sys, os
for v in ("resident", "off", "static", "adaptive"):
    try:
        r = json.load(open(os.path.join(sys.argv[1], f"prof-{v}.json")))
    except Exception as e:
        print(v, "failed", e); continue
    print(v, [round(w, 4) for w in r["walls"]])
    for o in r["ops"][:14]:
        print("   %-40s %6d %10.0f" % (o["name"][:40], o["count"], o["self_cpu_us"]))
PY
cat $R/progress.log
