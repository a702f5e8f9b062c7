#!/usr/bin/env bash
# Session 59, call 3, at the head (a split's address range whole, a split held again giving its budget back
# once, a debug line at each module unload). Pack with EMBER_PACK_TESTS=gpu; carry build-gpu.
# 1. every GPU test at the defaults; 2. how often real programs unload modules (the kernel table's change
# matters only where they do): the GPU tests' PyTorch, JAX and CuPy programs, and a JAX program past the
# budget, each once under manage-all at EMBER_LOG=debug, the unload lines counted; 3. on an H200 (the
# matrix's card) only, token generation at 1.5x under resident, static and adaptive.
source tools/bench/device-call.sh c55-3
gpu_tests 280
unloads 90 torch cupy jax
out=$R/unloads/jax-past-budget; stage "unloads: jax past the budget"
timeout 120 "$run" --driver real --log debug --manage-all 1 --budget 16G -- \
  python3 tools/bench/past_budget_speed.py jax 24576 3 >"$out.out" 2>"$out.err"
echo "rc $?" >>"$out.err"
echo "jax past budget: rc $(tail -n 1 "$out.err"), $(grep -c 'cuModuleUnload:' "$out.err") module unloads, $(grep -c 'cuLibraryUnload:' "$out.err") library unloads; $(tail -n 1 "$out.out" | grep -o '"median_pass_seconds": [0-9.]*')"
gzip -f "$out.err"
pack
grep -q H200 "$R/gpu.txt" && time_left 200 && hf_cells "resident static adaptive"
finish
