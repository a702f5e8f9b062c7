#!/usr/bin/env bash
# session 24, call 1: the GPU tests at the session's starting shim; the wavefront's traces for issue 12
# (nw, static and adaptive at both sizes, one process each, EMBER_SUITE_TRACE); then the gather probe:
# how fast PyTorch's own gathers read a Mixtral-shaped expert tensor in device memory and mapped.
set -uo pipefail
here=$PWD
source tools/bench/device-unpack.sh
export EMBER_PREBUILT=1 EMBER_BUILD=$here/build
R=/tmp/c1; mkdir -p $R/suite && cp tools/bench/results/suite/ab-23/seed/* $R/suite/
{ uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.used --format=csv; nproc; } >$R/machine.txt 2>&1
pack() { tar -C $R -czf "$OUT/c1.tar.gz" .; }
(cd build && LD_LIBRARY_PATH=$PWD/devlibs timeout 170 ctest -L gpu --output-on-failure >$R/ctest-gpu.log 2>&1)
tail -3 $R/ctest-gpu.log; pack
echo "== [$SECONDS s] nw traces" >>$R/progress.log
EMBER_RESULTS=$R/suite EMBER_SUITE_ONLY=nw EMBER_SUITE_VARIANTS="static adaptive" EMBER_SUITE_TRACE='nw-*' \
  timeout 200 bash tools/bench/suite.sh kernels >$R/nw.log 2>&1
pack
echo "== [$SECONDS s] gather probe" >>$R/progress.log
timeout 60 python3 tools/bench/gather_probe.py 20 >$R/gather.jsonl 2>$R/gather-device.log
timeout 90 build/bin/ember-run --driver real --mode mapped --manage-all 1 --budget 16G -- \
  python3 tools/bench/gather_probe.py 10 >>$R/gather.jsonl 2>$R/gather-mapped.log
echo "== [$SECONDS s] done" >>$R/progress.log
pack
cat $R/progress.log $R/gather.jsonl; ls -la $R/suite/diag
