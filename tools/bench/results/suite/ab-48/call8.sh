#!/usr/bin/env bash
# Session 52, call 8. Pack with EMBER_PACK_TESTS=0; carry build-gpu. transformers generate() of the 26 GB
# Llama-shaped 13B (hf_generate.py llama 13b 8 3: 8 new tokens, the median of three runs) past a 16 GiB
# budget: Ember adaptive with manage-all under PyTorch's default allocator (cuMemAlloc, converted) and
# under expandable_segments:True (cuMemCreate: within the budget on the GPU, past it in host memory,
# never promoted), against everything resident without Ember; one process each, in that order.
source tools/bench/device-call.sh c48-8
gen() { # label env...
  local label=$1; shift
  stage "$label"
  if [ "$label" = resident ]; then
    (cd tools/bench && env "$@" timeout 150 python3 hf_generate.py llama 13b 8 3 >"$R/$label.json" 2>"$R/$label.err")
  else
    (cd tools/bench && env "$@" timeout 150 "$run" --driver real --mode adaptive --budget 16G --manage-all 1 --log info \
      --stats "$R/$label.stats.json" -- python3 hf_generate.py llama 13b 8 3 >"$R/$label.json" 2>"$R/$label.err")
  fi
  echo "rc $?" >>"$R/$label.err"
  tail -n 1 "$R/$label.json" | cut -c1-400
  grep -h "at exit\|warn" "$R/$label.err" | cut -c1-300
  pack
}
gen resident
gen adaptive EMBER_LOG=info
time_left 60 && gen expandable PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
finish
