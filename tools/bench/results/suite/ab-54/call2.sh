#!/usr/bin/env bash
# Session 58, call 2: call 1 cut to what the session's last device time allows (its starts kept
# failing). Pack with EMBER_PACK_TESTS=gpu; carry build-gpu. 1. the PyTorch GPU tests at the defaults
# (torch_prog.py now checks memory_allocated(), which reads the pools' usage attributes under
# backend:cudaMallocAsync); 2. on an H200 only, token generation at 1.5x under resident, static and
# adaptive, a process each (the matrix's H200 records of it predate session 50's background touches).
export EMBER_CALL_SECONDS=${EMBER_CALL_SECONDS:-420}
source tools/bench/device-call.sh c54-2
gpu_tests 150 -R torch
grep -m3 memory_allocated "$R/gpu-tests.log"
grep -q H200 "$R/gpu.txt" && time_left 150 && hf_cells "resident static adaptive"
finish
