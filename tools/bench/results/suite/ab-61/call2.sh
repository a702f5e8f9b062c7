#!/usr/bin/env bash
# Not run in session 65: no machine was lent by then; ready for a later session.
# Session 65, call 2: call 1 cut down to what the session's last device time allows (call 1 never
# started): which training libraries the machine's python has, and the two GPU tests of the tensor
# lists (training's expectation, never yet run on a GPU, and apex's form in a program of our own).
# Pack with EMBER_PACK_TESTS=gpu; carry build-gpu.
source tools/bench/device-call.sh c61-2
python3 -m pip list 2>/dev/null | grep -i -E "^(torch|apex|deepspeed|transformer.engine|transformer_engine|accelerate|transformers) " \
  | tee "$R/frameworks.txt"
gpu_tests $((call_seconds - SECONDS - 10)) -R 'apex_tensor_lists|torch_train_past_budget'
finish
