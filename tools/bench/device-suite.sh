#!/usr/bin/env bash
# On a lent GPU machine: run the evaluation matrix (suite.sh) and bring its
# records back as one archive in $OUT. The build is carried as build-gpu/,
# llama-bench and gguf-py under .llama/, both made by device-pack.sh on the
# development machine (DESIGN.md: llama.cpp built there).
#   device-suite.sh [suite.sh steps ...]    (EMBER_BENCH_QUICK=1 for a smoke test)
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
source tools/bench/device-unpack.sh # build-gpu/ and .llama/ from device-pack.sh
export EMBER_PREBUILT=1 EMBER_BUILD=$here/build EMBER_RESULTS=${EMBER_RESULTS:-/tmp/suite}
mkdir -p "$EMBER_RESULTS"
{ uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.total,memory.used --format=csv; } \
  >"$EMBER_RESULTS/machine.txt" 2>&1
# stopped short of the call's limit, so the archive is always made
timeout "${EMBER_DEVICE_LIMIT:-570}" bash tools/bench/suite.sh "$@"
echo "suite.sh: exit $?" >>"$EMBER_RESULTS/progress.log"
dmesg 2>/dev/null | tail -n 40 >"$EMBER_RESULTS/dmesg.txt"
[ -n "${OUT:-}" ] && tar -C "$EMBER_RESULTS" -czf "$OUT/suite.tar.gz" .
