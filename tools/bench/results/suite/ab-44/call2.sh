#!/usr/bin/env bash
# Prepared in session 47, not yet run: the matrix's one cell never measured, bitonic at 1.5x under mapped
# (its record says "not run: out of time (EMBER_SUITE_WALL)"), on an H200 only: a H100's record is not the
# matrix's. One process; its runs stop once they took 20 s (EMBER_SUITE_MAX_SECONDS), so one run of some
# 40-60 s (static's take 20 s with 15.5 GiB resident). Pack with EMBER_PACK_TESTS=0; carry build-gpu. Merge
# with tools/bench/suite_merge.py, as for any call's suite.jsonl.
source tools/bench/device-call.sh c44-2
grep -q H200 "$R/gpu.txt" || { stage "not an H200: nothing run"; finish; exit 0; }
out=$R/bitonic-mapped && mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
stage "bitonic 1.5 mapped"
EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=mapped EMBER_SUITE_ONLY=bitonic \
  EMBER_SUITE_TIMEOUT=240 timeout 300 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
gzip -f "$out"/logs/*.log 2>/dev/null
finish
