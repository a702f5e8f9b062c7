#!/usr/bin/env bash
# On a lent GPU machine: run the evaluation matrix (suite.sh) and bring its
# records back as one archive in $OUT. The build is carried as build-gpu/
# (a stripped copy of build/), llama-bench and gguf-py under .llama/
# (DESIGN.md: llama.cpp built on the development machine).
#   device-suite.sh [suite.sh steps ...]    (EMBER_BENCH_QUICK=1 for a smoke test)
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
[ -d build-gpu ] && { rm -rf build; mv build-gpu build; }
export EMBER_PREBUILT=1 EMBER_BUILD=$here/build EMBER_RESULTS=${EMBER_RESULTS:-/tmp/suite}
mkdir -p "$EMBER_RESULTS"
# llama-bench's CUDA libraries come with the GPU image's Python packages
for lib in libcublas.so.13 libcudart.so.13 libnccl.so.2; do
  d=$(find /usr /opt -name "$lib" -print -quit 2>/dev/null)
  [ -n "$d" ] && LD_LIBRARY_PATH=$(dirname "$d")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
export LD_LIBRARY_PATH
[ -x .llama/bin/llama-bench ] && export EMBER_LLAMA_BENCH=$here/.llama/bin/llama-bench EMBER_GGUF_PY=$here/.llama/gguf-py
{ uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.total,memory.used --format=csv; } \
  >"$EMBER_RESULTS/machine.txt" 2>&1
# stopped short of the call's limit, so the archive is always made
timeout "${EMBER_DEVICE_LIMIT:-570}" bash tools/bench/suite.sh "$@"
echo "suite.sh: exit $?" >>"$EMBER_RESULTS/progress.log"
dmesg 2>/dev/null | tail -n 40 >"$EMBER_RESULTS/dmesg.txt"
[ -n "${OUT:-}" ] && tar -C "$EMBER_RESULTS" -czf "$OUT/suite.tar.gz" .
