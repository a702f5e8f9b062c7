#!/usr/bin/env bash
# session 22, call 1: token generation at 0.5x in many processes (hf_rounds.py: children forked
# after the imports, variants interleaved): resident, Ember loaded with EMBER_MODE=off, static and
# adaptive, for hf-llama 4b and hf-mixtral 8x1b-12; then hf-mixtral 8x1.5b at 1.5x, static against
# adaptive (2d31d73's sorts, first time on the GPU), in rounds.
set -uo pipefail
here=$PWD
[ -d build-gpu ] && { rm -rf build; mv build-gpu build; }
R=/tmp/c1; mkdir -p $R
{ uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.used --format=csv; nproc; } >$R/machine.txt 2>&1
lib=$here/build/lib/libember.so
G=$((1 << 30))
common="EMBER_BUDGET=16G,EMBER_MANAGE_ALL=1"
rounds() { # NAME TIMEOUT ARGS...: one hf_rounds run
  local name=$1 limit=$2; shift 2
  echo "== [$SECONDS s] $name" >>$R/progress.log
  (cd tools/bench && timeout -k 5 $limit python3 hf_rounds.py "$@" >$R/$name.jsonl 2>$R/$name.log); echo "rc $? after $SECONDS s" >>$R/$name.log
  python3 - $R/$name.jsonl <<'PY'
import json, sys, statistics, collections
by = collections.defaultdict(list); load = collections.defaultdict(list)
for line in open(sys.argv[1]):
    try: r = json.loads(line)
    except ValueError: continue
    if "seconds" in r: by[r["variant"]].append(r["seconds"]); load[r["variant"]].append(r["load_seconds"])
    else: print("error", r)
for v, s in by.items():
    print(f"{v:12s} n={len(s)} median {statistics.median(s):.4f} [{min(s):.4f}-{max(s):.4f}] load {statistics.median(load[v]):.2f}")
PY
}
v05="resident off:EMBER_MODE=off static:EMBER_MODE=static,$common,EMBER_STATS=$R/st-{round}.json adaptive:EMBER_MODE=adaptive,$common,EMBER_STATS=$R/ad-{round}.json"
rounds hf-llama-0.5 200 llama 4b 8 5 5 $lib $v05
tar -C $R -czf "$OUT/c1.tar.gz" .
rounds hf-mixtral-0.5 170 mixtral 8x1b-12 8 5 5 $lib ${v05//st-/mst-}
tar -C $R -czf "$OUT/c1.tar.gz" .
v15="resident static:EMBER_MODE=static,$common,EMBER_STATS=$R/mx15-st-{round}.json adaptive:EMBER_MODE=adaptive,$common,EMBER_STATS=$R/mx15-ad-{round}.json"
rounds hf-mixtral-1.5 150 mixtral 8x1.5b 8 3 2 $lib $v15
tar -C $R -czf "$OUT/c1.tar.gz" .
echo "== [$SECONDS s] done" >>$R/progress.log
cat $R/progress.log
