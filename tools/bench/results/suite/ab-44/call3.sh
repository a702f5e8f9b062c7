#!/usr/bin/env bash
# Prepared in session 47, not yet run: whether what kernels only write belongs in the mapped tier first,
# where a kernel waits for each mapped read and posts its mapped writes. At 1.5x of a 16 GiB budget, a
# process each in turn, the order turning each round:
# - the program's own hints by reads (EMBER_SUITE_PLACE_BY=reads: the arrays read most per byte on the GPU
#   first) against by traffic (read and written per byte, the hints' default), two rounds, on NW (its score
#   matrix mostly written, 12.9 GB against 0.8 GB read a run, its reference read whole: by traffic the hints
#   keep the matrix, by reads the reference) and k-means (its labels only written: both keep the points);
# - Ember adaptive with EMBER_READS_FIRST=1 (`reads`) against without (`head`), one library, two rounds, on
#   k-means and NW (where it changes the split), then star, bfs, cnn and pathfinder (where it should not:
#   star's atomically summed tables keep their bonus, bfs's parents are only written), as time allows.
# Not for the matrix as it stands: its hints are by traffic (the report says so). Pack with
# EMBER_PACK_TESTS=0; carry build-gpu.
source tools/bench/device-call.sh c44-3
cp build/lib-head.so build/lib-reads.so
env_of() { case $1 in reads) echo EMBER_READS_FIRST=1 ;; *) echo EMBER_LOG=info ;; esac; }
for w in nw kmeans; do
  for round in 0 1; do
    order="traffic reads"; [ $round = 1 ] && order="reads traffic"
    for by in $order; do time_left 300 && EMBER_SUITE_PLACE_BY=$by cell $w 1.5 hints "$by-$round"; done
  done
done
turns 40 "head reads" kmeans nw star bfs cnn pathfinder
finish
