#!/usr/bin/env bash
# Session 53, call 3, on whichever card comes. Pack with EMBER_PACK_TESTS=0; carry build-gpu.
# Call 2's CuPy cells again: past_budget.py's CuPy arrays overflowed their uint32 start past 16 GiB
# (fixed: the start wraps as the elements do). 24 GiB of arrays, five passes, resident (no Ember)
# against ember-run --budget 16G --manage-all 1, adaptive; CuPy's own pool and its MemoryAsyncPool;
# two rounds, the order turning.
source tools/bench/device-call.sh c49-3
mkdir -p "$R/speed"
for label in cupy-resident cupy-converted cupy-async-converted cupy-async-converted cupy-converted cupy-resident; do
  fw=cupy; [[ $label = cupy-async* ]] && fw=cupy-async
  n=$(ls "$R/speed" | grep -c "^$label-[0-9]*\.json$"); out=$R/speed/$label-$n
  stage "$label-$n"
  if [ "$label" = cupy-resident ]; then
    PAST_BUDGET_VARIANT=$label timeout 150 python3 tools/bench/past_budget_speed.py $fw 24576 5 >"$out.json" 2>"$out.err"
  else
    PAST_BUDGET_VARIANT=$label timeout 150 "$run" --driver real --mode adaptive --budget 16G --manage-all 1 --log info \
      --stats "$out.stats.json" -- python3 tools/bench/past_budget_speed.py $fw 24576 5 >"$out.json" 2>"$out.err"
  fi
  echo "rc $?" >>"$out.err"
  tail -n 1 "$out.json" | cut -c1-400; grep "at exit\|entry point" "$out.err" | cut -c1-250
  pack
done
finish
