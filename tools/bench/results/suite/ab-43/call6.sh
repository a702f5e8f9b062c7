#!/usr/bin/env bash
# Session 46, at d66a0cf. Pack with EMBER_PACK_TESTS=0; carry build-gpu.
# Call 5's adaptive-0 ended in a segmentation fault (rc 139) while faulthandler's watchdog thread dumped
# the main thread's stack, its last frame "<interpreter trampoline>" (CPython's gh-123967: fixed in
# 3.12.8). Which Python this is, then the same command twice without the stack sampling and twice with
# it, under adaptive with --stats as in call 5.
source tools/bench/device-call.sh c43-6
python3 -c "import sys, torch, transformers; print(sys.version); print(torch.__version__, transformers.__version__)" \
  >"$R/versions.txt" 2>&1
cat "$R/versions.txt"
cd tools/bench
one() { # label, stacks (0 or 1)
  local label=$1 stacks=$2
  stage "$label"
  local args=(python3 init_phases.py llama 13b); [ "$stacks" = 1 ] && args+=("$R/$label.stacks")
  timeout 90 "$run" --driver real --mode adaptive --budget 16G --manage-all 1 --log info \
    --stats "$R/$label.stats.json" -- "${args[@]}" >"$R/$label.json" 2>"$R/$label.err"
  echo "rc $?" >>"$R/$label.err"
  echo "$label: $(tail -1 "$R/$label.err") $(cat "$R/$label.json")"
  cd "$here" && pack && cd tools/bench
}
one plain-0 0
one stacks-0 1
one plain-1 0
one stacks-1 1
cd "$here"
finish
