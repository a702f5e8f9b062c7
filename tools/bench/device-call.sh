#!/usr/bin/env bash
# Sourced by a device call's script (tools/bench/results/suite/ab-N/callK.sh)
# at its start, in the repository's root on the lent GPU machine, in place
# of the preamble each call used to copy:
#   source tools/bench/device-call.sh NAME
# puts back what device-pack.sh made (device-unpack.sh), points the suite
# at that build (EMBER_PREBUILT, EMBER_BUILD), makes the call's results
# folder $R (/tmp/NAME) with the probes' rates in $R/suite (the matrix's
# bounds use them, so a call need not spend a minute probing; on a card
# other than the seeds' H200 it probes instead), $R/gpu.txt naming the card,
# and defines:
#   run        ember-run of that build
#   pack       $R as $OUT/NAME.tar.gz: call it after each stage, so that a
#              call cut short still brings back what it had
#   stage MSG  a line in $R/progress.log, with the call's seconds so far
#   time_left  whether more than ${1:-60} of the call's seconds are left
#              (EMBER_CALL_SECONDS, 540 unless the session has less device
#              time than a full call)
#   records    a line per record in $R/*/suite.jsonl: its folder, bench,
#              variant, seconds, runs, bytes demoted and error
#   llama_runs a line per llama-bench process run directly ($R/llama-*.jsonl):
#              its mean and samples in seconds, the bytes its .stats.json
#              says were promoted and demoted, and the EMBER_* settings it
#              names (paths left out)
#   finish     the call's last step: the packed build in place again, $R
#              packed, then records, llama_runs and the progress log
# and, for an A/B of Ember libraries a process each in turn (the packed
# build's kept as build/lib-head.so, others built by device-pack.sh's
# EMBER_PACK_LIBS as build/lib-X.so), adaptive at 1.5x of a 16 GiB budget:
#   use X                   make build/lib-X.so the library the runs load
#   one DIR W [ENV...]      the suite's kernel workload W, its results in $R/DIR (logs and traces gzipped)
#   llama X ROUND [ENV...]  under X, llama.cpp 13B F16 by llama-bench directly
#                           (-n 8 -r 3; /tmp/ember-13b.gguf, made by make_gguf.py)
#   hf X ROUND [ENV...]     under X, transformers generate() on hf-llama
#   turns LEFT "X Y..." W...  each kernel workload W by `one` under each library X
#                           in turn, with the settings the call's own `env_of X ROUND W`
#                           prints (words VAR=VALUE), two rounds, the order turning;
#                           each process only while more than LEFT of the call's
#                           seconds are left
# and, for any call:
#   cell W SCALE VARIANT ROUND [SECONDS]  the suite's kernel workload W at one
#                           size and variant under the packed library, in
#                           $R/W-SCALE-VARIANT-ROUND, its runs stopped after SECONDS (60)
#   gpu_tests SECONDS [ARG...]  the GPU tests at the defaults (ctest -L gpu, narrowed
#                           by ctest's ARGs), verbose, in $R/gpu-tests.log, its verdicts shown
#   train LABEL VARIANT LIMIT [EMBER ARGS...]  one process of tools/bench/train_step.py
#                           (24 GiB of state, 12 timed steps), in $R/train/LABEL.*, its
#                           record named VARIANT (the report's row, adaptive-1.5); with
#                           EMBER ARGS under ember-run with its stats (traced where
#                           LABEL is in $TRAIN_TRACED), without them resident
#   hf_cells "VARIANT..."   the matrix's token generation at 1.5x (suite.sh hf) under
#                           each variant, a process each, in $R/hf, until the call's end
#   unloads SECONDS PROG... each GPU test program tests/gpu/PROG_prog.py under manage-all at
#                           EMBER_LOG=debug, in $R/unloads, its module and library unloads counted
#   same_cases A B          whether the JSON lines of file B (a probe under
#                           Ember) are those of A (without), case by case
set -uo pipefail
name=${1:?usage: source tools/bench/device-call.sh NAME}
here=$PWD
source tools/bench/device-unpack.sh
export EMBER_PREBUILT=1 EMBER_BUILD=$here/build
R=/tmp/$name
mkdir -p "$R/suite"
run=$here/build/bin/ember-run
pack() { tar -C "$R" -czf "$OUT/$name.tar.gz" .; }
stage() { echo "== [$SECONDS s] $*" >>"$R/progress.log"; }
call_seconds=${EMBER_CALL_SECONDS:-540}
time_left() { [ "$SECONDS" -lt $((call_seconds - ${1:-60})) ]; }
cp build/lib/libember.so build/lib-head.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
one() { # DIR WORKLOAD [ENV...]
  local dir=$1 w=$2 out; shift 2
  stage "$dir"
  out=$R/$dir; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  env "$@" EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive \
    EMBER_SUITE_ONLY=$w EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log "$out"/diag/*.trace 2>/dev/null
  pack
}
turns() { # LEFT "X Y..." W...
  local left=$1 order=$2 w round v now; shift 2
  for w; do
    for round in 0 1; do
      now=$order; [ $round = 1 ] && now=$(printf '%s\n' $order | tac | xargs)
      # shellcheck disable=SC2046 # env_of's settings, one word each
      for v in $now; do time_left "$left" && { use "$v"; one "$w-$v-$round" "$w" EMBER_LOG=info $(env_of "$v" "$round" "$w"); }; done
    done
  done
}
llama() { # VARIANT ROUND [ENV...]
  local v=$1 round=$2; shift 2
  use "$v"; stage "llama-$v-$round"
  env "$@" GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 timeout 60 "$run" --driver real --mode adaptive --budget 16G \
    --stats "$R/llama-$v-$round.stats.json" --log info -- "$EMBER_LLAMA_BENCH" -m /tmp/ember-13b.gguf -p 0 -n 8 \
    -r 3 -o jsonl -ngl 99 >"$R/llama-$v-$round.jsonl" 2>"$R/llama-$v-$round.log"
  pack
}
hf() { # VARIANT ROUND [ENV...]
  local v=$1 round=$2; shift 2
  local out=$R/hf-llama-$v-$round
  use "$v"; stage "hf-llama-$v-$round"
  mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  env "$@" EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_SKIP="hf-mixtral-*" \
    EMBER_SUITE_TIMEOUT=90 timeout $((call_seconds + 20 - SECONDS)) bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
records() {
  local f
  for f in "$R"/*/suite.jsonl; do
    [ -e "$f" ] || continue
    python3 -c "
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'),
          r.get('d2h_bytes'), r.get('error'))
" "$f"
  done
}
llama_runs() {
  local f
  for f in "$R"/llama-*.jsonl; do
    [ -e "$f" ] || continue
    python3 -c "
import json, os, sys
name, stats = os.path.basename(sys.argv[1])[:-6], sys.argv[1][:-6] + '.stats.json'
st = json.load(open(stats)) if os.path.exists(stats) else {}
dev = st['devices'][0] if st.get('devices') else {}
paths = ('EMBER_STATS', 'EMBER_TRACE', 'EMBER_REAL_LIBCUDA', 'EMBER_LOG_FILE')
given = ' '.join(f'{k}={v}' for k, v in st.get('settings', {}).items() if k not in paths)
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(name, r.get('avg_ns', 0) / 1e9, [round(x / 1e9, 4) for x in r.get('samples_ns', [])],
          dev.get('bytes_promoted'), dev.get('bytes_demoted'), given)
" "$f"
  done
}
cell() { # WORKLOAD SCALE VARIANT ROUND [SECONDS]
  local out=$R/$1-$2-$3-$4 limit=${5:-60}
  stage "$1 $2 $3 round $4"
  mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=$2 EMBER_SUITE_VARIANTS=$3 \
    EMBER_SUITE_ONLY=$1 EMBER_SUITE_TIMEOUT=$limit timeout $((limit + 30)) bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
gpu_tests() { # SECONDS [ARG...]
  local limit=$1; shift
  stage "gpu tests at the defaults $*"
  (cd build && EMBER_GPU_TIMEOUT=60 EMBER_GPU_VERBOSE=1 timeout "$limit" ctest -L gpu "$@" --output-on-failure -V \
    >"$R/gpu-tests.log" 2>&1)
  grep -E "tests passed|tests failed|\*\*\*Failed|Timeout" "$R/gpu-tests.log" | head -30
  pack
}
hf_cells() { # "VARIANT..."
  local out=$R/hf
  stage "hf at 1.5x: $1"
  mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS="$1" \
    EMBER_SUITE_TIMEOUT=90 timeout $((call_seconds - SECONDS - 20)) bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
  gzip -f "$out"/logs/*.log 2>/dev/null
  pack
}
unloads() { # SECONDS PROG...
  local limit=$1 prog out; shift
  mkdir -p "$R/unloads"
  for prog in "$@"; do
    out=$R/unloads/$prog; stage "unloads: $prog"
    timeout "$limit" "$run" --driver real --log debug --manage-all 1 -- python3 "tests/gpu/${prog}_prog.py" \
      >"$out.out" 2>"$out.err"
    echo "rc $?" >>"$out.err"
    echo "$prog: $(tail -n 1 "$out.err"), $(grep -c 'cuModuleUnload:' "$out.err") module unloads ($(grep 'cuModuleUnload:' "$out.err" | grep -o '[0-9]* kernels' | awk '{s+=$1} END {print s+0}') kernels forgotten), $(grep -c 'cuLibraryUnload:' "$out.err") library unloads"
    gzip -f "$out.err"
    pack
  done
}
train() { # LABEL VARIANT LIMIT [EMBER ARGS...]
  local label=$1 variant=$2 limit=$3 out=$R/train; shift 3
  local f=$out/$label trace=
  stage "train $label"; mkdir -p "$out"
  case " ${TRAIN_TRACED:-} " in *" $label "*) trace=$f.trace ;; esac
  if (($#)); then
    TRAIN_VARIANT=$variant EMBER_STATS=$f.stats.json EMBER_TRACE=$trace timeout "$limit" "$run" --driver real "$@" -- \
      python3 tools/bench/train_step.py 24576 12 >"$f.json" 2>"$f.err"
  else
    TRAIN_VARIANT=$variant timeout "$limit" python3 tools/bench/train_step.py 24576 12 >"$f.json" 2>"$f.err"
  fi
  echo "train $label: rc $? $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["median_step_seconds"], [round(x,3) for x in d["step_seconds"]], "build", d["build_seconds"], "peak GiB", round(d["gpu_peak_bytes"]/2**30,2), "loss", float.fromhex(d["losses"][-1]))' "$f.json" 2>&1 | tail -n 1)"
  grep -E '^ember\[[0-9]+\] (warn|error)|at exit: peak|tensor lists' "$f.err" | head -5
  gzip -f "$f.err" "$f.trace" 2>/dev/null; pack
}
same_cases() { # WITHOUT UNDER
  python3 - "$1" "$2" <<'PY'
import json, sys
a, b = ([json.loads(l) for l in open(f)] for f in sys.argv[1:])
diff = [(x, y) for x, y in zip(a, b) if x != y]
print(f"{sys.argv[2].rsplit('/', 1)[-1]}: {len(a) - len(diff)} of {len(a)} cases as without Ember ({len(b)} run)")
for x, y in diff:
    print("  without:", x, "\n  under:  ", y)
PY
}
finish() { # the call's end: the packed build back, its results packed and summed up
  use head
  stage done
  pack
  records | sort
  llama_runs
  cat "$R/progress.log"
}
# The seeds are the H200's: ab-23's bandwidth probe and ab-31's sparse probe
# (the first with reads and writes at once). On another card (the lent kind
# may be an H100) the probes run here instead, so that a record's bound is
# its card's.
nvidia-smi --query-gpu=name,memory.total,pcie.link.gen.max,pcie.link.width.max --format=csv,noheader >"$R/gpu.txt" 2>&1
if grep -q H200 "$R/gpu.txt"; then
  cp tools/bench/results/suite/ab-31/seed/probe.json tools/bench/results/suite/ab-31/seed/sparse-probe.json "$R/suite/"
else
  EMBER_RESULTS=$R/suite bash tools/bench/suite.sh rates >"$R/probe.log" 2>&1
  stage "probed on $(cat "$R/gpu.txt")"
fi
