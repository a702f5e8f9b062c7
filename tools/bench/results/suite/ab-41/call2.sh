#!/usr/bin/env bash
# Session 44, after call 1, at the head where EMBER_READ_MOSTLY is on by default and copies and memsets
# into memory launches have read withdraw the advice (shim/abi/copies.def). Pack with
# EMBER_PACK_LIBS=base=618a23f (read-mostly off by default, no copy hooks); carry build-gpu.
# - pathfinder's matrix cells at the head's defaults: static and adaptive at 0.5x and 1.5x of a 16 GiB
#   budget, three rounds of a process each in turn, the order turning each round. Only an H200's records
#   replace the matrix's.
# - the GPU tests (ctest -L gpu: the runtime program, PyTorch, CuPy, JAX, each plainly and under Ember),
#   which must pass at the new defaults.
# - hf-llama (transformers generate(), 1.5x, adaptive) under the head and base, a process each in turn:
#   whether the copy hooks cost PyTorch anything.
source tools/bench/device-call.sh c41-2
cell() { # scale variant round
  local out=$R/pathfinder-$1-$2-$3
  stage "pathfinder $1 $2 round $3"
  mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=$1 EMBER_SUITE_VARIANTS=$2 \
    EMBER_SUITE_ONLY=pathfinder EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
for round in 0 1 2; do
  for scale in 1.5 0.5; do
    order="static adaptive"; [ $round = 1 ] && order="adaptive static"
    for v in $order; do time_left 240 && cell $scale $v $round; done
  done
done
time_left 200 && { stage "gpu tests"
  (cd build && EMBER_GPU_TIMEOUT=60 timeout 150 ctest -L gpu --output-on-failure >"$R/gpu-tests.log" 2>&1); pack; }
for r in 0 1; do
  order="head base"; [ $r = 1 ] && order="base head"
  for v in $order; do time_left 45 && hf $v $r; done
done
finish
