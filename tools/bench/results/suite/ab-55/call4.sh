#!/usr/bin/env bash
# Session 59, call 4: call 3 cut to the device time left (about 120 s after a start). At the head: the GPU
# tests of JAX (whose pool maps VMM memory, split past the budget) and the C runtime programs
# (runtime_*), then the unload lines of the GPU tests' PyTorch and JAX programs under manage-all at
# EMBER_LOG=debug. Pack with EMBER_PACK_TESTS=gpu; carry build-gpu.
source tools/bench/device-call.sh c55-4
gpu_tests 80 -R "jax|runtime"
unloads 45 torch jax
finish
