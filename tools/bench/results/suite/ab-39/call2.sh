#!/usr/bin/env bash
# Session 39, call 2, at bdace1a (a host phase's exchange waits until every stream launched on has been
# waited for, gpu_busy.c): the GPU tests (ctest -L gpu) first; then star at 1.5x of a 16 GiB budget under
# adaptive, two processes, to see its exchange still made (its runs end in cudaDeviceSynchronize); bfs and
# pathfinder once; transformers Llama and Mixtral once each through the harness.
source tools/bench/device-call.sh c2
stage gpu-tests
(cd build && LD_LIBRARY_PATH=$PWD/devlibs timeout 200 ctest -L gpu --output-on-failure -j1 >"$R/gpu-tests.log" 2>&1; echo "rc $?" >>"$R/gpu-tests.log")
tail -5 "$R/gpu-tests.log"
pack
one() { # FOLDER WORKLOAD [ENV...]
  local dir=$1 w=$2; shift 2
  stage "$dir"
  out=$R/$dir; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  env "$@" EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive \
    EMBER_SUITE_ONLY=$w EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
for k in 0 1; do time_left 100 && one "star-$k" star EMBER_LOG=info; done
for w in bfs pathfinder; do time_left 80 && one "$w-0" "$w" EMBER_LOG=info; done
for m in llama mixtral; do
  time_left 70 || continue
  skip="hf-mixtral-*"; [ $m = mixtral ] && skip="hf-llama-*"
  stage "hf-$m"
  out=$R/hf-$m; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_SKIP="$skip" \
    EMBER_SUITE_TIMEOUT=90 timeout $((560 - SECONDS)) bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
done
stage done
pack
records | sort
for f in "$R"/*/logs/*.log.gz; do echo "$f: $(zcat "$f" | grep -c 'exchanged at a host phase') exchange lines"; done
cat "$R/progress.log"
