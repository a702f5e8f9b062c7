#!/usr/bin/env bash
# session 20, call 4: the promotion's advice after its prefetch completes (late, 7852da5 plus that),
# against advice span by span (new, 7852da5): kernels at 0.5x cold (resident, new, late), BFS and
# star at 1.5x, then hf-mixtral 8x1.5b at 1.5x (old de1c13d, new).
set -uo pipefail
here=$PWD
[ -d build-gpu ] && { rm -rf build; mv build-gpu build; }
R=/tmp/c4; mkdir -p $R
mkdir -p .calls/ab/new; ln -sfn $here/build/bin .calls/ab/new/bin; ln -sfn $here/build/lib .calls/ab/new/lib
suite=$here/build/bin/ember-suite
one() {
  local cell=$1 b=$2; shift 2
  [ $SECONDS -lt ${LIMIT:-330} ] || { echo "== $cell $b: not run, out of time" | tee -a $R/progress.log; return 0; }
  echo "== [$SECONDS s] $cell $b" >>$R/progress.log
  if [ "$b" = resident ]; then
    shift; timeout --foreground -k 5 100 "$@" >$R/$cell-$b.out 2>$R/$cell-$b.log
  else
    timeout --foreground -k 5 100 "$here/.calls/ab/$b/bin/ember-run" --driver real --budget 16G \
      --stats "$R/$cell-$b.stats.json" --log info "$@" >$R/$cell-$b.out 2>$R/$cell-$b.log
  fi
  echo "rc $? after $SECONDS s" >>$R/$cell-$b.log
  echo "$cell $b: $(python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print(r.get('runs_seconds') or r.get('run_seconds'), r.get('load_seconds',''))" $R/$cell-$b.out 2>/dev/null)"
}
G=$((1 << 30))
for w in pathfinder bfs star kmeans nw radix bitonic; do
  one $w-0.5 resident -- $suite $w $((8 * G)) 3 resident
  for b in new late; do one $w-0.5 $b --mode adaptive -- $suite $w $((8 * G)) 3; done
done
tar -C $R -czf "$OUT/c4.tar.gz" .
for w in bfs star; do for b in new late; do one $w-1.5 $b --mode adaptive -- $suite $w $((24 * G)) 3; done; done
tar -C $R -czf "$OUT/c4.tar.gz" .
for b in old new; do one mixtral-1.5 $b --mode adaptive --manage-all 1 -- python3 tools/bench/hf_generate.py mixtral 8x1.5b 8 3; done
tar -C $R -czf "$OUT/c4.tar.gz" .
echo "== [$SECONDS s] done"
