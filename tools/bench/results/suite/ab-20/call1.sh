#!/usr/bin/env bash
# session 20, call 1 (HEAD): the promotion probe, the 0.5x kernels cold (resident, adaptive),
# both models at 0.5x (resident, static, adaptive), then the GPU tests.
set -uo pipefail
here=$PWD
[ -d build-gpu ] && { rm -rf build; mv build-gpu build; }
want=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt)
if [ -n "$want" ] && [ "$want" != "$here" ] && [ ! -e "$want" ]; then mkdir -p "$(dirname "$want")"; ln -s "$here" "$want"; fi
R=/tmp/c1; mkdir -p $R
{ uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.total,memory.used --format=csv; nproc; } >$R/machine.txt 2>&1
echo "== [$SECONDS s] promote probe"
timeout 120 build/bin/ember-promote-probe $((4 << 30)) >$R/promote-probe.json 2>$R/promote-probe.err; echo "rc $?" >>$R/promote-probe.err
cat $R/promote-probe.json | cut -c1-3000
export EMBER_PREBUILT=1 EMBER_BUILD=$here/build EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=0.5
mkdir -p $R/suite
echo "== [$SECONDS s] kernels"
EMBER_SUITE_ONLY="bfs kmeans nw star pathfinder" EMBER_SUITE_VARIANTS="resident adaptive" EMBER_SUITE_WALL=200 \
  EMBER_SUITE_TRACE="bfs-0.5-adaptive" timeout 260 bash tools/bench/suite.sh kernels 2>&1 | grep -E '^==|"bench"' | cut -c1-300
echo "== [$SECONDS s] hf"
EMBER_SUITE_VARIANTS="resident static adaptive" EMBER_SUITE_WALL=200 timeout $((520 - SECONDS)) bash tools/bench/suite.sh hf 2>&1 | grep -E '^==|"bench"' | cut -c1-300
tar -C $R -czf "$OUT/c1.tar.gz" .
if [ $SECONDS -lt 470 ]; then
  echo "== [$SECONDS s] gpu tests"
  (cd build && LD_LIBRARY_PATH=$PWD/devlibs timeout $((580 - SECONDS)) ctest -L gpu --output-on-failure >$R/ctest-gpu.log 2>&1; tail -15 $R/ctest-gpu.log)
fi
tar -C $R -czf "$OUT/c1.tar.gz" .
echo "== [$SECONDS s] done"
