#!/usr/bin/env bash
# Session 46, at d66a0cf. Pack with EMBER_PACK_TESTS=0; carry build-gpu.
# Where building hf-llama 13b under manage-all spends its host time on this card (call 4: load 2.2-2.7 s
# against resident's 0.55; ab-34's init_phases had adaptive's build 2.4 s on the host even without the
# host's touches). init_phases.py, a process each: resident; adaptive at 16 GiB (the default);
# adaptive with EMBER_POPULATE_HOST=0 (no touches); adaptive at 64 GiB (everything fits: the
# conversion, its advice and the population on the GPU, no host part); mapped at 16 GiB with
# EMBER_POPULATE_HOST=0 (the conversion and its advice alone). Then the default again, under perf
# where the machine has it, to name the host's hot functions.
source tools/bench/device-call.sh c43-5
which perf eu-stack gdb py-spy >"$R/tools.txt" 2>&1
cd tools/bench
one() { # label, then the command's prefix
  local label=$1; shift
  stage "$label"
  timeout 90 "$@" python3 init_phases.py llama 13b "$R/$label.stacks" >"$R/$label.json" 2>"$R/$label.err"
  echo "rc $?" >>"$R/$label.err"
  echo "$label: $(cat "$R/$label.json")"
  cd "$here" && pack && cd tools/bench
}
ember() { # mode budget, then more options
  local mode=$1 budget=$2; shift 2
  echo "$run" --driver real --mode "$mode" --budget "$budget" --manage-all 1 --log info "$@" --
}
one resident-0
one adaptive-0 $(ember adaptive 16G --stats "$R/adaptive-0.stats.json")
one adaptive-nopop-0 env EMBER_POPULATE_HOST=0 $(ember adaptive 16G)
one adaptive-64g-0 $(ember adaptive 64G --stats "$R/adaptive-64g-0.stats.json")
one mapped-nopop-0 env EMBER_POPULATE_HOST=0 $(ember mapped 16G)
one adaptive-1 $(ember adaptive 16G)
one resident-1
if command -v perf >/dev/null; then
  one adaptive-perf perf record -F 499 -g -o "$R/adaptive.perf" $(ember adaptive 16G)
  perf report -i "$R/adaptive.perf" --no-children --sort dso,symbol --stdio 2>/dev/null | head -80 >"$R/adaptive-perf.txt"
  rm -f "$R/adaptive.perf"
  head -60 "$R/adaptive-perf.txt"
fi
cd "$here"
finish
