#!/usr/bin/env bash
# session 22, call 2: token generation at 0.5x in several processes per variant (hf_rounds.py: one
# process per variant and round imports torch and transformers once and forks two children, each a whole
# measurement), variants in turn, the order rotating each round: resident (no Ember), Ember with
# EMBER_MODE=off, static and adaptive, for hf-llama 4b and hf-mixtral 8x1b-12 (2 rounds of 2 children);
# then loading hf-llama 13b at 1.5x with EMBER_POPULATE_HOST=0 and 1 (static).
# (Call 1 forked children from one parent for all variants, each loading Ember itself: importing torch
# had already loaded the real driver, so its Ember children measured the real driver; not recorded.)
set -uo pipefail
here=$PWD
[ -d build-gpu ] && { rm -rf build; mv build-gpu build; }
R=/tmp/c2; mkdir -p $R
{ uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.used --format=csv; nproc; } >$R/machine.txt 2>&1
run=$here/build/bin/ember-run
variant_cmd() { # VARIANT STATS: the command prefix for one variant
  case $1 in
    resident) ;;
    off) echo "$run --driver real --mode off --" ;;
    *-pop*) echo "$run --driver real --budget 16G --manage-all 1 --mode ${1%-pop*} --set EMBER_POPULATE_HOST=${1#*-pop} --stats $2 --" ;;
    *) echo "$run --driver real --budget 16G --manage-all 1 --mode $1 --stats $2 --" ;;
  esac
}
rounds() { # NAME ROUNDS CHILDREN LIMIT "VARIANTS" ARCH SIZE TOKENS RUNS
  local name=$1 nr=$2 kids=$3 limit=$4; local -a vs=($5); shift 5
  echo "== [$SECONDS s] $name" >>$R/progress.log
  for ((r = 0; r < nr; r++)); do
    for ((i = 0; i < ${#vs[@]}; i++)); do
      local v=${vs[(i + r) % ${#vs[@]}]}
      [ $SECONDS -lt ${LIMIT:-540} ] || { echo "$name $v $r: not run, out of time" >>$R/progress.log; continue; }
      (cd tools/bench && timeout -k 5 $limit $(variant_cmd $v $R/$name-$v-$r.stats.json) python3 hf_rounds.py $v $r $kids "$@" \
        >>$R/$name.jsonl 2>>$R/$name.log) || echo "$name $v $r: rc $?" >>$R/progress.log
    done
  done
  python3 - $R/$name.jsonl <<'PY'
import json, sys, statistics, collections
by = collections.defaultdict(list); load = collections.defaultdict(list)
for line in open(sys.argv[1]):
    try: r = json.loads(line)
    except ValueError: continue
    if "seconds" in r: by[r["variant"]].append(r["seconds"]); load[r["variant"]].append(r["load_seconds"])
    else: print("error", r)
for v, s in by.items():
    print(f"{sys.argv[1].split('/')[-1]:24s} {v:14s} n={len(s)} median {statistics.median(s):.4f} [{min(s):.4f}-{max(s):.4f}] load {statistics.median(load[v]):.2f} {load[v]}")
PY
  tar -C $R -czf "$OUT/c2.tar.gz" .
}
rounds hf-llama-0.5 2 2 60 "resident off static adaptive" llama 4b 8 5
rounds hf-mixtral-0.5 2 2 60 "resident off static adaptive" mixtral 8x1b-12 8 5
rounds hf-llama-1.5-populate 1 1 90 "resident static-pop0 static-pop1" llama 13b 2 1
echo "== [$SECONDS s] done" >>$R/progress.log
cat $R/progress.log
