#!/usr/bin/env bash
# Session 66, call 3: the last of the session's device time (under 300 s): which training libraries
# the lent python has, and the GPU tests that read tensor lists and torch.cat by their structures
# (training's expectations, apex's form in a program of our own), never yet run on a GPU.
# Pack with EMBER_PACK_TESTS=gpu; carry build-gpu.
source tools/bench/device-call.sh c62-3
python3 -m pip list 2>/dev/null | grep -i -E "^(torch|apex|deepspeed|transformer.engine|transformer_engine|accelerate|transformers) " \
  | tee "$R/frameworks.txt"
gpu_tests $((call_seconds - SECONDS - 15)) -R 'apex_tensor_lists|torch_train_past_budget'
finish
