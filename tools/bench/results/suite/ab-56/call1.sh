#!/usr/bin/env bash
# Session 60, call 1, at the head (ab-55's call 3, never run, plus CUDA IPC under manage-all).
# Pack with EMBER_PACK_TESTS=gpu EMBER_PACK_KEEP="ember-suite ember-vmm-host-probe"; carry build-gpu.
# 1. every GPU test at the defaults; 2. PyTorch sharing a CUDA tensor (ipc_probe.py) without Ember and
# under manage-all, where Ember should say once why the driver refuses it; 3. how often real programs
# unload modules (the GPU tests' PyTorch, CuPy and JAX programs, and JAX past the budget, under
# manage-all at EMBER_LOG=debug); 4. on an H200 (the matrix's card) only, token generation at 1.5x
# under resident, static and adaptive.
source tools/bench/device-call.sh c56-1
gpu_tests 280
out=$R/ipc; mkdir -p "$out"; stage "ipc: torch sharing a CUDA tensor"
timeout 60 python3 tools/bench/ipc_probe.py >"$out/plain.out" 2>"$out/plain.err"
timeout 60 "$run" --driver real --manage-all 1 -- python3 tools/bench/ipc_probe.py >"$out/ember.out" 2>"$out/ember.err"
echo "ipc without Ember: $(cat "$out/plain.out"); under manage-all: $(cat "$out/ember.out"); $(grep -c 'cuIpcGetMemHandle:' "$out/ember.err") warning(s)"
pack
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
