#!/usr/bin/env bash
# session 21, call 2: populating what stays mapped in host memory at an allocation's first launch
# ("new", EMBER_POPULATE=1, the default) against the same build with EMBER_POPULATE=0 ("pop0"):
# the promotion probe (mapped first writes, as is or populated first); both models at 1.5x (resident,
# adaptive, static); cnn, radix and NW at 1.5x; star, k-means and BFS at 1.5x and cnn and radix at 0.5x
# with the default; hf-mixtral at 0.5x in two resident/adaptive pairs.
set -uo pipefail
here=$PWD
[ -d build-gpu ] && { rm -rf build; mv build-gpu build; }
want=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt)
if [ -n "$want" ] && [ "$want" != "$here" ] && [ ! -e "$want" ]; then mkdir -p "$(dirname "$want")"; ln -s "$here" "$want"; fi
R=/tmp/c2; mkdir -p $R/suite/logs
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
{ uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.used --format=csv; } >$R/machine.txt 2>&1
cp $R/machine.txt $R/suite/machine.txt
echo "== [$SECONDS s] promote probe" >>$R/progress.log
timeout 90 build/bin/ember-promote-probe $((4 << 30)) >$R/promote-probe.json 2>$R/promote-probe.err; echo "rc $?" >>$R/promote-probe.err
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print({k: v for k, v in r.items() if k.startswith('mapped_first')})" $R/promote-probe.json
build/bin/ember-uvm-bench probe $((4 << 30)) >$R/suite/probe.json 2>/dev/null
suite=$here/build/bin/ember-suite
# one BENCH SCALE VARIANT BUILD [ember-run options] -- command: run it; record it when BUILD is new or resident
one() {
  local bench=$1 scale=$2 v=$3 b=$4; shift 4
  local cell=$bench-$scale-$v-$b t0=$SECONDS
  [ $SECONDS -lt ${LIMIT:-540} ] || { echo "== $cell: not run, out of time" | tee -a $R/progress.log; return 0; }
  echo "== [$SECONDS s] $cell" >>$R/progress.log
  local stats=$R/$cell.stats.json rc=0 pop=1
  [ "$b" = pop0 ] && pop=0
  if [[ $b == resident* ]]; then
    shift; timeout --foreground -k 5 120 "$@" >$R/$cell.out 2>$R/$cell.log || rc=$?
  else
    EMBER_POPULATE=$pop timeout --foreground -k 5 120 "$here/build/bin/ember-run" --driver real --budget 16G \
      --stats "$stats" --log info "$@" >$R/$cell.out 2>$R/$cell.log || rc=$?
  fi
  echo "rc $rc after $((SECONDS - t0)) s" >>$R/$cell.log
  echo "$cell: $(python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print(r.get('runs_seconds') or r.get('run_seconds'), r.get('load_seconds',''))" $R/$cell.out 2>/dev/null) $(grep -ho 'populated in host memory[^;]*' $R/$cell.log | head -1)"
  if [ "$b" = resident ] || [ "$b" = new ]; then
    [ "$b" = resident ] && v=resident
    cp $R/$cell.log $R/suite/logs/$bench-$scale-$v.log
    python3 tools/bench/suite_record.py --bench "$bench" --scale "$scale" --variant "$v" --peer "" \
      --budget $((16 << 30)) --gpu "$gpu" --stats "$stats" --rc $rc --timeout 120 --wall $((SECONDS - t0)) \
      --results $R/suite --out "$(cat $R/$cell.out)" >>$R/suite/suite.jsonl
  fi
}
G=$((1 << 30))
for m in llama:13b mixtral:8x1.5b; do
  hf=(python3 tools/bench/hf_generate.py ${m%%:*} ${m#*:} 8 3)
  one hf-${m%%:*} 1.5 resident resident -- "${hf[@]}"
  one hf-${m%%:*} 1.5 adaptive new --mode adaptive --manage-all 1 -- "${hf[@]}"
  one hf-${m%%:*} 1.5 adaptive pop0 --mode adaptive --manage-all 1 -- "${hf[@]}"
  one hf-${m%%:*} 1.5 static new --mode static --manage-all 1 -- "${hf[@]}"
  tar -C $R -czf "$OUT/c2.tar.gz" .
done
for w in cnn radix nw; do
  for b in new pop0; do one $w 1.5 adaptive $b --mode adaptive -- $suite $w $((24 * G)) 3; done
  one $w 1.5 static new --mode static -- $suite $w $((24 * G)) 3
done
tar -C $R -czf "$OUT/c2.tar.gz" .
for w in star kmeans bfs; do one $w 1.5 adaptive new --mode adaptive -- $suite $w $((24 * G)) 3; done
for w in cnn radix; do one $w 0.5 adaptive new --mode adaptive -- $suite $w $((8 * G)) 3; done
tar -C $R -czf "$OUT/c2.tar.gz" .
mx=(python3 tools/bench/hf_generate.py mixtral 8x1b-12 8 5)
for i in 1 2; do
  one hf-mixtral 0.5 resident resident$i -- "${mx[@]}"
  one hf-mixtral 0.5 adaptive pair$i --mode adaptive --manage-all 1 -- "${mx[@]}"
done
tar -C $R -czf "$OUT/c2.tar.gz" .
echo "== [$SECONDS s] done"
