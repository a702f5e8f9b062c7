#!/usr/bin/env bash
# session 23, call 5: the GPU tests at the session's final shim (after the counters merge).
source tools/bench/device-unpack.sh
(cd build && LD_LIBRARY_PATH=$PWD/devlibs timeout 170 ctest -L gpu --output-on-failure >$OUT/ctest-gpu.log 2>&1)
tail -4 $OUT/ctest-gpu.log; git log -1 --format=%h 2>/dev/null
