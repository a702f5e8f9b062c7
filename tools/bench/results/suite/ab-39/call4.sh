#!/usr/bin/env bash
# Session 39, call 4: the pass looks past hot regions covered in part (policy.c, ranked_per_cycle: radix's
# chunk edges, credited twice and never ranked per cycle, ended every pass) as `head`, against `main`
# (6e352e7; head is 6b94874), a process each in turn, the order turning each round, adaptive at 1.5x of a 16 GiB budget:
# radix and cnn (two rounds), hf-llama and hf-mixtral (one round), kmeans, star and bfs (one round).
# llama.cpp, whose packed tensors share regions too, is call 5's (its build was not ready).
source tools/bench/device-call.sh c4
cp build/lib/libember.so build/lib-head.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
one() { # FOLDER WORKLOAD [ENV...]
  local dir=$1 w=$2; shift 2
  stage "$dir"
  out=$R/$dir; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  env "$@" EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive \
    EMBER_SUITE_ONLY=$w EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
hf() { # VARIANT MODEL
  use $1; stage "hf-$2-$1"
  local skip="hf-mixtral-*"; [ $2 = mixtral ] && skip="hf-llama-*"
  out=$R/hf-$2-$1; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_SKIP="$skip" \
    EMBER_SUITE_TIMEOUT=90 timeout $((560 - SECONDS)) bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
for round in 0 1; do
  order="head main"; [ $round = 1 ] && order="main head"
  for w in radix cnn; do
    for v in $order; do
      time_left 300 || continue
      use $v; one "$w-$v-$round" "$w" EMBER_LOG=info
    done
  done
done
for m in llama mixtral; do
  for v in head main; do time_left 130 && hf $v $m; done
done
for w in kmeans star bfs; do
  for v in main head; do time_left 25 && { use $v; one "$w-$v-0" "$w" EMBER_LOG=info; }; done
done
use head
stage done
pack
records | sort
cat "$R/progress.log"
