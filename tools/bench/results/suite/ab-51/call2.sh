#!/usr/bin/env bash
# Session 55, call 2: CuPy's 24 GiB passes past a 16 GiB budget took 0.70 s at the head in call 1 (with
# EMBER_KEEP_FREED 0 and at its default) against 0.52 at 63d36b0 in ab-49's call 4. The same card kind
# (H100), so is it the code or the machine? past_budget_speed.py cupy-async (EMBER_KEEP_FREED=0) and
# cupy (its own pool, converted cuMemAlloc) under the library at 63d36b0 (base) and the head, adaptive,
# manage-all, a process each, two rounds in turned order. Pack with EMBER_PACK_TESTS=0
# EMBER_PACK_LIBS="base=63d36b0"; carry build-gpu.
source tools/bench/device-call.sh c51-2
mkdir -p "$R/speed"
for round in 0 1; do
  libs="base head"; [ $round = 1 ] && libs="head base"
  for fw in cupy-async cupy; do
    for v in $libs; do
      time_left 40 || break
      use "$v"; out=$R/speed/$fw-$v-$round; stage "speed $fw-$v-$round"
      EMBER_KEEP_FREED=0 PAST_BUDGET_VARIANT="$fw-$v" timeout 65 "$run" --driver real --mode adaptive \
        --budget 16G --manage-all 1 --log info --stats "$out.stats.json" -- python3 tools/bench/past_budget_speed.py "$fw" 24576 5 \
        >"$out.json" 2>"$out.err"
      echo "rc $?" >>"$out.err"; gzip -f "$out.stats.json" 2>/dev/null
      echo "$fw-$v-$round $(tail -n 1 "$out.json" | cut -c1-240)"
      pack
    done
  done
done
use head
finish
