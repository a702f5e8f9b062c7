#!/usr/bin/env bash
# Session 50, call 6: the background pool (EMBER_POPULATE_ASYNC, the default at 46f3f6d, "head": half the
# processors, at most eight threads) against a pool of every processor up to sixteen (try/pool16, "t16",
# build/lib-t16.so), building hf-llama 13b and hf-mixtral 8x1.5b past a 16 GiB budget under adaptive with
# manage-all (init_phases.py), two rounds of a process each in turn. Pack with
# EMBER_PACK_LIBS="t16=REV" EMBER_PACK_TESTS=0; carry build-gpu.
source tools/bench/device-call.sh c46-6
init() { # arch size lib round
  local label=$1-$3-$4
  use "$3"
  stage "init $label"
  (cd tools/bench && timeout 60 "$run" --driver real --mode adaptive --budget 16G --manage-all 1 --log info \
    --stats "$R/init-$label.stats.json" -- python3 init_phases.py "$1" "$2" >"$R/init-$label.json" 2>"$R/init-$label.err")
  echo "rc $?" >>"$R/init-$label.err"
  pack
}
for round in 0 1; do
  order=(head t16)
  [ $round = 1 ] && order=(t16 head)
  for m in "llama 13b" "mixtral 8x1.5b"; do
    for v in "${order[@]}"; do time_left 20 && init $m "$v" "$round"; done
  done
done
finish >/dev/null
for f in "$R"/init-*-[0-9].json; do echo "$(basename "$f" .json): $(cat "$f")"; done | cut -c1-300
grep -h "threads make\|rc [1-9]" "$R"/init-*.err
cat "$R/progress.log"
