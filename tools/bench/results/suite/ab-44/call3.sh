#!/usr/bin/env bash
# Prepared in session 47, not yet run: whether the program's own hints do better leaving what its kernels
# only write mapped, where its reads wait and its writes are posted. EMBER_SUITE_PLACE_BY=reads (the arrays
# read most per byte on the GPU first) against traffic (read and written per byte, the hints' default), at
# 1.5x of a 16 GiB budget, a process each in turn, two rounds: NW first (its score matrix is mostly written,
# 12.9 GB against 0.8 GB read a run, its reference read whole: by traffic the hints keep the matrix, by reads
# the reference), then k-means (its labels only written: both orders keep the points), then radix and cnn,
# whose two orders differ less. If reads-first is much faster on NW (the bound is 0.195 s, the hints 0.314),
# Ember could rank by what kernels declare const (kernel_types.h) at equal demand; NW's score pointer is not
# const, its reference is. Not for the matrix as it stands: its hints are by traffic (the report says so).
# Pack with EMBER_PACK_TESTS=0; carry build-gpu.
source tools/bench/device-call.sh c44-3
hints() { # WORKLOAD BY ROUND
  local out=$R/$1-$2-$3
  stage "$1 hints by $2 round $3"
  mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_SUITE_PLACE_BY=$2 EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=hints \
    EMBER_SUITE_ONLY=$1 EMBER_SUITE_TIMEOUT=90 timeout 120 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  pack
}
for w in nw kmeans radix cnn; do
  for round in 0 1; do
    order="traffic reads"; [ $round = 1 ] && order="reads traffic"
    for by in $order; do time_left 60 && hints $w $by $round; done
  done
done
finish
