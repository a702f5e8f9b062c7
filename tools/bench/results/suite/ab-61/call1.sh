#!/usr/bin/env bash
# Not run in session 65: no machine started (ab-61/call2.sh was its cut-down retry); ready for a later session.
# Session 65, call 1, at head: the training GPU test's new expectation and apex's form in a program of
# our own (tensor lists read
# by their blocks, never yet run on a GPU), which training libraries the machine's python has; then
# on an H200 the matrix's token generation and model build at 1.5x (its H200 records predate the
# background touches of session 50), elsewhere every GPU test at head.
# Pack with EMBER_PACK_TESTS=gpu; carry build-gpu.
source tools/bench/device-call.sh c61-1
python3 -m pip list 2>/dev/null | grep -i -E "^(torch|apex|deepspeed|transformer.engine|bitsandbytes|vllm|flash.attn|triton|accelerate|transformers) " \
  | tee "$R/frameworks.txt"
gpu_tests 120 -R 'torch_train_past_budget|apex_tensor_lists'
cp "$R/gpu-tests.log" "$R/gpu-tests-train.log"
if grep -q H200 "$R/gpu.txt"; then
  hf_cells "resident static adaptive"
else
  gpu_tests $((call_seconds - SECONDS - 20))
fi
finish
