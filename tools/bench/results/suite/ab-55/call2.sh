#!/usr/bin/env bash
# Session 59, call 2, at the head (the kernel table forgets only an unloaded module's kernels, asking
# cuFuncGetModule at each kernel's first sight). Pack with EMBER_PACK_TESTS=gpu; carry build-gpu.
# 1. every GPU test at the defaults; 2. on an H200 (the matrix's card) only, token generation at 1.5x under
# resident, static and adaptive (the matrix's H200 records predate session 50's background touches).
source tools/bench/device-call.sh c55-2
gpu_tests 280
grep -q H200 "$R/gpu.txt" && time_left 200 && hf_cells "resident static adaptive"
finish
