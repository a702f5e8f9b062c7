#!/usr/bin/env bash
# Not run in session 65 or 66: no machine started (ab-61/call2.sh is its cut-down retry); ready for a later session.
# Session 65, call 1, at head: the training GPU test's new expectation and apex's form in a program of
# our own (tensor lists read by their blocks, never yet run on a GPU), that program traced, which
# training libraries the machine's python has; then on an H200 the matrix's token generation and
# model build at 1.5x (its H200 records predate the background touches of session 50), elsewhere
# every GPU test at head.
# Pack with EMBER_PACK_TESTS=gpu; carry build-gpu.
source tools/bench/device-call.sh c61-1
python3 -m pip list 2>/dev/null | grep -i -E "^(torch|apex|deepspeed|transformer.engine|bitsandbytes|vllm|flash.attn|triton|accelerate|transformers) " \
  | tee "$R/frameworks.txt"
gpu_tests 120 -R 'torch_train_past_budget|apex_tensor_lists'
cp "$R/gpu-tests.log" "$R/gpu-tests-train.log"
# the apex-style program traced, so that what its launches were credited can be read against the chunks
out=$R/apex; mkdir -p "$out"; stage "tensor_lists_prog traced"
EMBER_TRACE=$out/trace EMBER_STATS=$out/stats.json timeout 60 "$run" --driver real --mode adaptive --budget 256M \
  --manage-all 1 -- build/bin/tensor_lists_prog >"$out/out.txt" 2>"$out/err.txt"
echo "tensor_lists_prog: rc $? $(tail -n 1 "$out/out.txt"), $(grep -o '"launches_tensor_lists": [0-9]*' "$out/stats.json")"
gzip -f "$out/trace"; pack
if grep -q H200 "$R/gpu.txt"; then
  hf_cells "resident static adaptive"
else
  gpu_tests $((call_seconds - SECONDS - 20))
fi
finish
