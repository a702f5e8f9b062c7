#!/usr/bin/env bash
# Session 50, call 3 (call 1 again, its pool fixed: in call 1 EMBER_POPULATE_ASYNC=1 started no thread, a count of
# regions that wrapped, and every allocation was touched before it returned, as by default, which call 2's
# debug lines showed): EMBER_POPULATE_ASYNC=1 (the host's touches made by a background pool while the
# program goes on) against the default touches before each allocation returns, building a model past
# a 16 GiB budget under adaptive with manage-all (init_phases.py: the build, then every weight drawn
# again), hf-llama 13b and hf-mixtral 8x1.5b, against resident (no Ember) in the same call; three
# rounds of a process each in turn, the order turning. Pack with EMBER_PACK_TESTS=0; carry build-gpu.
source tools/bench/device-call.sh c46-3
init() { # arch size variant round
  local label=$1-$3-$4
  stage "init $label"
  if [ "$3" = resident ]; then
    (cd tools/bench && timeout 120 python3 init_phases.py "$1" "$2" >"$R/init-$label.json" 2>"$R/init-$label.err")
  else
    (cd tools/bench && timeout 120 "$run" --driver real --mode adaptive --budget 16G --manage-all 1 --log info \
      --populate-async "${3#async}" --stats "$R/init-$label.stats.json" -- python3 init_phases.py "$1" "$2" >"$R/init-$label.json" 2>"$R/init-$label.err")
  fi
  echo "rc $?" >>"$R/init-$label.err"
  pack
}
for round in 0 1 2; do
  order=(async0 async1 resident)
  [ $((round % 2)) = 1 ] && order=(resident async1 async0)
  for m in "llama 13b" "mixtral 8x1.5b"; do
    for v in "${order[@]}"; do time_left 40 && init $m "$v" "$round"; done
  done
done
stage done
pack
for f in "$R"/init-*-[0-9].json; do echo "$(basename "$f" .json): $(cat "$f")"; done | cut -c1-400
for f in "$R"/init-*.stats.json; do
  python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))['devices'][0]
print(sys.argv[1].split('/')[-1], 'populated', d.get('bytes_populated'), 'up', d.get('bytes_promoted'), 'down', d.get('bytes_demoted'))
" "$f"
done
grep -h "rc [1-9]" "$R"/init-*.err
cat "$R/progress.log"
