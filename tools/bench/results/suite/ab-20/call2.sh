#!/usr/bin/env bash
# session 20, call 2: the promotion probe (with refreshes); A/B of three builds under adaptive:
# old (de1c13d, before host phases), new (6b24491: refresh after host phases), noadv (new, and no
# preferred-location advice on promotion or demotion); kernels at 0.5x (cold and warm) and 1.5x;
# hf-llama 4b at 0.5x taken apart (resident, EMBER_MODE=off, adaptive with nothing managed, old/new
# under manage-all, static under manage-all).
set -uo pipefail
here=$PWD
[ -d build-gpu ] && { rm -rf build; mv build-gpu build; }
R=/tmp/c2; mkdir -p $R
{ uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.used --format=csv; which perf py-spy; } >$R/machine.txt 2>&1
mkdir -p .calls/ab/new; ln -sfn $here/build/bin .calls/ab/new/bin; ln -sfn $here/build/lib .calls/ab/new/lib
echo "== [$SECONDS s] promote probe"
timeout 120 build/bin/ember-promote-probe $((4 << 30)) >$R/promote-probe.json 2>$R/promote-probe.err
python3 -c "import json;d=json.load(open('$R/promote-probe.json'));print({k:v for k,v in d.items() if 'resident' in k or 'host_read' in k})"
suite=$here/build/bin/ember-suite
one() { # one CELL BUILD [ember-run options] -- command ; BUILD resident runs without Ember
  local cell=$1 b=$2; shift 2
  [ $SECONDS -lt ${LIMIT:-540} ] || { echo "== $cell $b: not run, out of time" | tee -a $R/progress.log; return 0; }
  echo "== [$SECONDS s] $cell $b" >>$R/progress.log
  if [ "$b" = resident ] || [ "$b" = none ]; then
    shift; timeout --foreground -k 5 100 "$@" >$R/$cell-$b.out 2>$R/$cell-$b.log
  else
    timeout --foreground -k 5 100 "$here/.calls/ab/$b/bin/ember-run" --driver real --budget 16G \
      --stats "$R/$cell-$b.stats.json" --log info "$@" >$R/$cell-$b.out 2>$R/$cell-$b.log
  fi
  echo "rc $? after $SECONDS s" >>$R/$cell-$b.log
  echo "$cell $b: $(python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print(r.get('runs_seconds') or r.get('run_seconds'), r.get('load_seconds',''))" $R/$cell-$b.out 2>/dev/null)"
}
G=$((1 << 30))
for w in pathfinder bfs star kmeans nw radix; do
  one $w-0.5 resident -- $suite $w $((8 * G)) 3 resident
  for b in old new noadv; do one $w-0.5 $b --mode adaptive -- $suite $w $((8 * G)) 3; done
done
tar -C $R -czf "$OUT/c2.tar.gz" .
for w in pathfinder bfs star; do
  for b in old new noadv; do one $w-1.5 $b --mode adaptive -- $suite $w $((24 * G)) 3; done
done
tar -C $R -czf "$OUT/c2.tar.gz" .
hf=(python3 tools/bench/hf_generate.py llama 4b 8 3)
one hf-0.5 resident -- "${hf[@]}"
one hf-0.5 new --mode off -- "${hf[@]}"
one hf-0.5-plain new --mode adaptive -- "${hf[@]}"
one hf-0.5-all new --mode adaptive --manage-all 1 -- "${hf[@]}"
one hf-0.5-all old --mode adaptive --manage-all 1 -- "${hf[@]}"
one hf-0.5-all-static new --mode static --manage-all 1 -- "${hf[@]}"
one hf-0.5-again resident -- "${hf[@]}"
tar -C $R -czf "$OUT/c2.tar.gz" .
echo "== [$SECONDS s] done"
