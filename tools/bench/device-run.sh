#!/usr/bin/env bash
# On a lent GPU machine, with the build made on the development machine
# carried along (the device tool's `carry: ["build"]`, or build-gpu/ from
# device-pack.sh): put the tree where the build expects it, check the
# machine, run the tests, then benchmarks.
#   device-run.sh [tests] [callbench] [uvm] [adaptive]
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
source tools/bench/device-unpack.sh # sets want, the build's source folder, linked to this tree
cd "${want:-$here}"
export EMBER_PREBUILT=1 EMBER_RESULTS=$(mktemp -d /tmp/ember-results.XXXXXX)
mkdir -p "$EMBER_RESULTS"
{
  echo "== machine"; uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.total,memory.used --format=csv
  ls -l /dev/nvidia-uvm-tools 2>&1; python3 -c 'import torch; print("torch", torch.__version__)'
} 2>&1 | tee "$EMBER_RESULTS/machine.txt"
for step in "$@"; do
  case $step in
    tests)
      # the unit tests need Criterion, which the GPU image lacks: carried in build/devlibs
      # (tools/bench/devlibs.sh fills build/devlibs before the build is carried)
      (cd build && LD_LIBRARY_PATH=$PWD/devlibs ctest -L unit --output-on-failure -j4 2>&1 | tee "$EMBER_RESULTS/ctest.log" | tail -8
       ctest -L gpu --output-on-failure 2>&1 | tee -a "$EMBER_RESULTS/ctest.log" | tail -12) ;;
    callbench) bash tools/bench/run.sh callbench ;;
    uvm) bash tools/bench/run.sh uvm ;;
    adaptive) bash tools/bench/run.sh adaptive ;;
  esac
done

# The device tool brings back at most 8 files: the records (those present), and the logs in one archive.
if [ -n "${OUT:-}" ]; then
  for f in machine.txt ctest.log callbench.json probe.json uvm.jsonl uvm.md uvm.png adaptive.jsonl adaptive.md adaptive.png; do
    [ -e "$EMBER_RESULTS/$f" ] && cp "$EMBER_RESULTS/$f" "$OUT/"
  done
  tar -C "$EMBER_RESULTS" -czf "$OUT/logs-$(IFS=-; echo "$*").tar.gz" . 2>/dev/null
fi
