#!/usr/bin/env bash
# session 34, call 3, at the head. Where initialising hf-llama 13b past a 16 GiB budget spends its time:
# the diag traces of hf-llama at 1.5x show no launch, allocation or wait for 2.3 s (adaptive) and 4.1 s
# (static) between the modules' own initialisation and the normal_() pass, where resident takes 0.68 s in all.
# init_phases.py times the two phases on the host and until the GPU finishes each, and samples the Python
# stacks every 0.25 s; resident (no Ember), adaptive and static (traced), adaptive with EMBER_POPULATE_HOST=0,
# then adaptive and resident again.
source tools/bench/device-call.sh c3
cd tools/bench
one() { # label, then the command's prefix
  local label=$1; shift
  stage "$label"
  timeout 120 "$@" python3 init_phases.py llama 13b "$R/$label.stacks" >"$R/$label.json" 2>"$R/$label.err"
  echo "rc $?" >>"$R/$label.err"
  cd "$here" && pack && cd tools/bench
}
ember() { # mode, then more options
  local mode=$1; shift
  echo "$run" --driver real --mode "$mode" --budget 16G --manage-all 1 --log info "$@" --
}
one resident-0
one adaptive-0 $(ember adaptive --trace "$R/adaptive-0.trace" --stats "$R/adaptive-0.stats.json")
one static-0 $(ember static --trace "$R/static-0.trace" --stats "$R/static-0.stats.json")
one adaptive-nopop-0 env EMBER_POPULATE_HOST=0 $(ember adaptive)
one adaptive-1 $(ember adaptive)
one resident-1
cd "$here"
gzip -f "$R"/*.trace 2>/dev/null
stage done
pack
for f in "$R"/*.json; do echo "$(basename "$f"): $(head -c 400 "$f")"; done
tail -n 3 "$R"/*.err
cat "$R/progress.log"
