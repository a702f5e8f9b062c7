#!/usr/bin/env bash
# session 21, call 4 (the build of call 3): the GPU tests; then token generation at 0.5x pinned to
# two cores (taskset -c 2,3), resident and Ember interleaved in rounds, to see whether pinning takes
# out the spread between processes that single pairs showed.
set -uo pipefail
here=$PWD
[ -d build-gpu ] && { rm -rf build; mv build-gpu build; }
want=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt)
if [ -n "$want" ] && [ "$want" != "$here" ] && [ ! -e "$want" ]; then mkdir -p "$(dirname "$want")"; ln -s "$here" "$want"; fi
R=/tmp/c4; mkdir -p $R
echo "== [$SECONDS s] gpu tests" >>$R/progress.log
(cd build && LD_LIBRARY_PATH=$PWD/devlibs timeout 200 ctest -L gpu --output-on-failure >$R/ctest-gpu.log 2>&1; tail -4 $R/ctest-gpu.log)
tar -C $R -czf "$OUT/c4.tar.gz" .
one() {
  local cell=$1 b=$2; shift 2
  [ $SECONDS -lt ${LIMIT:-430} ] || { echo "== $cell $b: not run, out of time" | tee -a $R/progress.log; return 0; }
  echo "== [$SECONDS s] $cell $b" >>$R/progress.log
  if [ "$b" = resident ]; then
    taskset -c 2,3 timeout --foreground -k 5 100 "$@" >$R/$cell-$b.out 2>$R/$cell-$b.log
  else
    taskset -c 2,3 timeout --foreground -k 5 100 "$here/build/bin/ember-run" --driver real --budget 16G \
      --stats "$R/$cell-$b.stats.json" --log info "$@" >$R/$cell-$b.out 2>$R/$cell-$b.log
  fi
  echo "rc $? after $SECONDS s" >>$R/$cell-$b.log
  echo "$cell $b: $(python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print(r.get('seconds'), r.get('runs_seconds'), r.get('load_seconds',''))" $R/$cell-$b.out 2>/dev/null)"
}
mx=(python3 tools/bench/hf_generate.py mixtral 8x1b-12 8 5)
hf=(python3 tools/bench/hf_generate.py llama 4b 8 5)
for r in 1 2 3; do
  one hf-mixtral-0.5-r$r resident -- "${mx[@]}"
  one hf-mixtral-0.5-r$r adaptive --mode adaptive --manage-all 1 -- "${mx[@]}"
  one hf-mixtral-0.5-r$r static --mode static --manage-all 1 -- "${mx[@]}"
done
tar -C $R -czf "$OUT/c4.tar.gz" .
for r in 1 2; do
  one hf-llama-0.5-r$r resident -- "${hf[@]}"
  one hf-llama-0.5-r$r adaptive --mode adaptive --manage-all 1 -- "${hf[@]}"
done
tar -C $R -czf "$OUT/c4.tar.gz" .
echo "== [$SECONDS s] done"
