#!/usr/bin/env bash
# session 21, call 1: the promotion's advice given by size and kind ("new": at issue for ranges of at most a
# span and for converted memory, once the prefetch completed for the program's larger managed ranges),
# beside old (f017221: at issue for every range) and late (new, every promotion advised once it completed).
# The promotion probe (first and second read after each case); the kernels at 0.5x (resident, old, new
# adaptive, new static); star, BFS and pathfinder at 1.5x; hf-llama and hf-mixtral at 0.5x; the GPU tests.
set -uo pipefail
here=$PWD
[ -d build-gpu ] && { rm -rf build; mv build-gpu build; }
want=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt)
if [ -n "$want" ] && [ "$want" != "$here" ] && [ ! -e "$want" ]; then mkdir -p "$(dirname "$want")"; ln -s "$here" "$want"; fi
R=/tmp/c1; mkdir -p $R/suite/logs
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
{ uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.used --format=csv; } >$R/machine.txt 2>&1
cp $R/machine.txt $R/suite/machine.txt
mkdir -p .calls/ab/new; ln -sfn $here/build/bin .calls/ab/new/bin; ln -sfn $here/build/lib .calls/ab/new/lib
echo "== [$SECONDS s] promote probe" >>$R/progress.log
timeout 90 build/bin/ember-promote-probe $((4 << 30)) >$R/promote-probe.json 2>$R/promote-probe.err; echo "rc $?" >>$R/promote-probe.err
build/bin/ember-uvm-bench probe $((4 << 30)) >$R/suite/probe.json 2>/dev/null
suite=$here/build/bin/ember-suite
# one BENCH SCALE VARIANT BUILD [ember-run options] -- command: run it; record it when BUILD is new or resident
one() {
  local bench=$1 scale=$2 v=$3 b=$4; shift 4
  local cell=$bench-$scale-$v-$b t0=$SECONDS
  [ $SECONDS -lt ${LIMIT:-540} ] || { echo "== $cell: not run, out of time" | tee -a $R/progress.log; return 0; }
  echo "== [$SECONDS s] $cell" >>$R/progress.log
  local stats=$R/$cell.stats.json rc=0
  if [ "$b" = resident ]; then
    shift; timeout --foreground -k 5 120 "$@" >$R/$cell.out 2>$R/$cell.log || rc=$?
  else
    timeout --foreground -k 5 120 "$here/.calls/ab/$b/bin/ember-run" --driver real --budget 16G \
      --stats "$stats" --log info "$@" >$R/$cell.out 2>$R/$cell.log || rc=$?
  fi
  echo "rc $rc after $((SECONDS - t0)) s" >>$R/$cell.log
  echo "$cell: $(python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print(r.get('runs_seconds') or r.get('run_seconds'), r.get('load_seconds',''))" $R/$cell.out 2>/dev/null)"
  if [ "$b" = resident ] || [ "$b" = new ]; then
    [ "$b" = resident ] && v=resident
    cp $R/$cell.log $R/suite/logs/$bench-$scale-$v.log
    python3 tools/bench/suite_record.py --bench "$bench" --scale "$scale" --variant "$v" --peer "" \
      --budget $((16 << 30)) --gpu "$gpu" --stats "$stats" --rc $rc --timeout 120 --wall $((SECONDS - t0)) \
      --results $R/suite --out "$(cat $R/$cell.out)" >>$R/suite/suite.jsonl
  fi
}
G=$((1 << 30))
for w in pathfinder bfs star kmeans nw radix cnn bitonic; do
  one $w 0.5 resident resident -- $suite $w $((8 * G)) 3 resident
  one $w 0.5 adaptive old --mode adaptive -- $suite $w $((8 * G)) 3
  one $w 0.5 adaptive new --mode adaptive -- $suite $w $((8 * G)) 3
  one $w 0.5 static new --mode static -- $suite $w $((8 * G)) 3
done
tar -C $R -czf "$OUT/c1.tar.gz" .
for b in old new late; do one star 1.5 adaptive $b --mode adaptive -- $suite star $((24 * G)) 3; done
for b in old new; do one bfs 1.5 adaptive $b --mode adaptive -- $suite bfs $((24 * G)) 3; done
one pathfinder 1.5 adaptive new --mode adaptive -- $suite pathfinder $((24 * G)) 3
tar -C $R -czf "$OUT/c1.tar.gz" .
hf=(python3 tools/bench/hf_generate.py llama 4b 8 5)
one hf-llama 0.5 resident resident -- "${hf[@]}"
one hf-llama 0.5 adaptive new --mode adaptive --manage-all 1 -- "${hf[@]}"
mx=(python3 tools/bench/hf_generate.py mixtral 8x1b-12 8 5)
one hf-mixtral 0.5 resident resident -- "${mx[@]}"
one hf-mixtral 0.5 adaptive new --mode adaptive --manage-all 1 -- "${mx[@]}"
tar -C $R -czf "$OUT/c1.tar.gz" .
if [ $SECONDS -lt 470 ]; then
  echo "== [$SECONDS s] gpu tests" >>$R/progress.log
  (cd build && LD_LIBRARY_PATH=$PWD/devlibs timeout $((570 - SECONDS)) ctest -L gpu --output-on-failure >$R/suite/ctest-gpu.log 2>&1; tail -4 $R/suite/ctest-gpu.log)
fi
tar -C $R -czf "$OUT/c1.tar.gz" .
echo "== [$SECONDS s] done"
