#!/usr/bin/env bash
# Session 63, call 3, the same warm H100: hf-llama under head against base, two more rounds, the
# order turning: calls 1 and 2 put head's processes at 1.689-1.743 s per 8 tokens against base's
# 1.676-1.725, the ranges overlapping.
source tools/bench/device-call.sh c59-3
for round in 3 4; do
  order="head base"; [ $round = 4 ] && order="base head"
  for v in $order; do time_left 40 && hf "$v" "$round"; done
done
finish
