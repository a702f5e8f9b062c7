#!/usr/bin/env bash
# Session 37, call 3, at the head with ember-suite's `placed` (the kernels' new peer, "hints": after one
# untimed run that counts its traffic, the program itself puts its busiest arrays per byte on the GPU up
# to the budget's high watermark and leaves the rest in host memory mapped for the GPU, by
# cudaMemAdvise and prefetches, without Ember). At 1.5x of a 16 GiB budget, a process each in turn, the
# order turning each round: nw static, adaptive and hints in three rounds (the wavefront's criterion:
# within 3x of resident, or at what the mapped tier allows); pathfinder, cnn and radix adaptive and hints
# in three; kmeans, bfs and star in one; bitonic's hints last if time is left.
source tools/bench/device-call.sh c3
early() { [ "$SECONDS" -lt "${1:-470}" ]; }
one() { # workload variant round
  local out=$R/$1-$2-$3
  mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=$2 EMBER_SUITE_ONLY=$1 EMBER_SUITE_TIMEOUT=60 \
    timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  pack
}
turn() { # round variants...: the variants rotated by the round
  local r=$1; shift
  local vs=("$@") n=$#
  local i; for ((i = 0; i < n; i++)); do echo "${vs[(i + r) % n]}"; done
}
for round in 0 1 2; do
  for w in nw pathfinder cnn radix kmeans bfs star; do
    case $w in kmeans|bfs|star) [ $round = 0 ] || continue ;; esac
    vs=(adaptive hints); [ $w = nw ] && vs=(static adaptive hints)
    for v in $(turn "$round" "${vs[@]}"); do
      early || continue
      stage "$w $v round $round"
      one "$w" "$v" "$round"
    done
  done
done
early 420 && { stage "bitonic hints"; one bitonic hints 0; }
stage done
pack
records
cat "$R/progress.log"
