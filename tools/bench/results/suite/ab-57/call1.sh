#!/usr/bin/env bash
# Session 61, call 1, at the head.
# Pack with EMBER_PACK_TESTS=gpu EMBER_PACK_KEEP="ember-suite ember-vmm-host-probe ember-torture"; carry build-gpu.
# 1. on an H200 (the matrix's card) only, token generation and the model's build at 1.5x under
#    resident, static and adaptive (the matrix's H200 records predate the background touches);
# 2. PyTorch sharing a CUDA tensor (ipc_probe.py), and exporting its memory as a dma-buf
#    (cuMemGetHandleForAddressRange), without Ember and under manage-all;
# 3. the torture with threads of the virtual memory API on the real driver, manage-all, 64 MiB budget;
# 4. every GPU test at the defaults, in the time left.
source tools/bench/device-call.sh c57-1
if grep -q H200 "$R/gpu.txt"; then
  EMBER_CALL_SECONDS=$((call_seconds - 150)) call_seconds=$((call_seconds - 150)) hf_cells "resident static adaptive"
fi
out=$R/ipc; mkdir -p "$out"; stage "ipc and dma-buf: torch's CUDA tensor"
timeout 60 python3 tools/bench/ipc_probe.py >"$out/plain.out" 2>"$out/plain.err"
timeout 60 "$run" --driver real --manage-all 1 -- python3 tools/bench/ipc_probe.py >"$out/ember.out" 2>"$out/ember.err"
echo "without Ember: $(cat "$out/plain.out")"
echo "under manage-all: $(cat "$out/ember.out"); $(grep -c 'cuIpcGetMemHandle:' "$out/ember.err") IPC warning(s)"
pack
out=$R/torture; mkdir -p "$out"; stage "torture: 4 managed + 4 VMM threads, 30 s, manage-all, 64 MiB"
timeout 90 "$run" --driver real --mode adaptive --budget 64M --manage-all 1 --log warn -- \
  build/bin/ember-torture 4 30 4 4 >"$out/out.txt" 2>"$out/err.txt"
echo "torture: rc $?; $(tail -n 3 "$out/out.txt" | tr '\n' ' ') $(wc -l <"$out/err.txt") stderr lines"
pack
time_left 120 && gpu_tests $((call_seconds - SECONDS - 30))
finish
