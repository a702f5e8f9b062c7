#!/usr/bin/env bash
# On a lent GPU machine: record the validation runs (validate.sh) and bring
# them back as one archive in $OUT. The build is carried as build-gpu/,
# llama-bench and gguf-py under .llama/, both made by device-pack.sh on the
# development machine (DESIGN.md: llama.cpp built there).
#   device-validate.sh [workload ...]   (default: all four)
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
source tools/bench/device-unpack.sh # build-gpu/ and .llama/ from device-pack.sh
export EMBER_PREBUILT=1 EMBER_BUILD=$here/build EMBER_RESULTS=/tmp/validation
rm -rf "$EMBER_RESULTS"; mkdir -p "$EMBER_RESULTS"
{ uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.total,memory.used --format=csv; } \
  >"$EMBER_RESULTS/machine.txt" 2>&1
if [ -x .llama/bin/llama-bench ]; then
  python3 tools/bench/make_gguf.py .llama/gguf-py /tmp/model.gguf 13b >"$EMBER_RESULTS/gguf.log" 2>&1 &&
    export EMBER_LLAMA_BENCH=$here/.llama/bin/llama-bench EMBER_GGUF=/tmp/model.gguf
fi
workloads=${*:-reread torch-decode hf-generate llama-cpp}
SECONDS=0
for w in $workloads; do
  echo "== $w (${SECONDS}s)"
  bash tools/bench/validate.sh "$w"
done
echo "== done (${SECONDS}s)"
[ -n "${OUT:-}" ] && tar -C "$EMBER_RESULTS" -czf "$OUT/validation.tar.gz" .
