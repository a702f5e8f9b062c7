#!/usr/bin/env bash
# The evaluation matrix (issue 9): every workload of the suite at 0.5x and
# 1.5x of the budget, under off (0.5x only), mapped, static and adaptive,
# with its everything-resident run and, for token generation, the peers a
# user would pick instead. One JSON record per (workload, size, variant)
# in $EMBER_RESULTS/suite.jsonl (suite_record.py adds the bound); then
# suite_report.py writes REPORT.md and its plots.
#   suite.sh [probe] [kernels] [hf] [llama] [overhead] [report]   (default: all)
#   suite.sh rates    the probe's bandwidths and sparse rates alone (probe adds PyTorch's gather rates)
# Its settings are environment variables, each once in tools/bench/settings.sh with its default
# (`suite.sh --help` prints them); EMBER_LOG, Ember's own, is taken into each run's log (info here unless
# set; debug names the advice and prefetches that held a thread 20 ms or more).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/settings.sh"
case ${1:-} in
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; bench_settings_help; exit 0 ;;
esac
bench_settings_apply
source "$here/../setup.sh"
results=${EMBER_RESULTS:=$here/results/suite}
mkdir -p "$results/logs"
jsonl=$results/suite.jsonl
budget=$EMBER_BENCH_BUDGET
runs=$EMBER_BENCH_RUNS
quick=$EMBER_BENCH_QUICK
[ "$quick" = 1 ] && { budget=1G; runs=1; }
budget_bytes=$(python3 -c "import sys; u={'K':10,'M':20,'G':30,'T':40}; s=sys.argv[1]; print(int(float(s[:-1])*(1<<u[s[-1].upper()])) if s[-1].isalpha() else int(s))" "$budget")
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
[ -n "$gpu" ] || { echo "suite: no GPU here; the matrix needs one" >&2; exit 1; }
timeout_s=$EMBER_SUITE_TIMEOUT
# no record starts after this many seconds (a lent GPU's call has a limit): it is written as not run
wall_s=$EMBER_SUITE_WALL
SECONDS=0

say() { echo "== [${SECONDS}s] $*"; }

# wanted BENCH SCALE VARIANT PEER: whether the record is to be run (EMBER_SUITE_SCALES, _SKIP,
# _VARIANTS); past EMBER_SUITE_WALL it is written as not run, and is not wanted.
wanted() {
  local bench=$1 scale=$2 variant=$3 peer=$4
  case " $EMBER_SUITE_SCALES " in *" $scale "*) ;; *) return 1 ;; esac
  local skip
  for skip in $EMBER_SUITE_SKIP; do
    # shellcheck disable=SC2053 # a pattern, on purpose
    [[ $bench-$scale-$variant == $skip ]] && return 1
  done
  if [ -n "$EMBER_SUITE_VARIANTS" ]; then
    case " $EMBER_SUITE_VARIANTS " in *" $variant "*|*" ${peer:-none} "*) ;; *) return 1 ;; esac
  fi
  if [ "$SECONDS" -ge "$wall_s" ]; then
    printf '{"bench": "%s", "scale": %s, "variant": "%s", "error": "not run: out of time (EMBER_SUITE_WALL)"}\n' \
      "$bench" "$scale" "$variant" >>"$jsonl"
    return 1
  fi
}

# prefix BENCH SCALE VARIANT STATS: sets pre, what the variant's command runs under
# (ember-run unless VARIANT is resident, off or a peer).
prefix() {
  local bench=$1 scale=$2 variant=$3 stats=$4
  pre=()
  case $variant in
    mapped|static|adaptive)
      pre=("$EMBER_BUILD/bin/ember-run" --driver real --mode "$variant" --budget "$budget" --stats "$stats" --log "${EMBER_LOG:-info}")
      case $bench in hf-*) pre+=(--manage-all 1) ;; llama-cpp) pre=(env GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 "${pre[@]}") ;; esac
      local key=$bench-$scale-$variant pattern
      for pattern in $EMBER_SUITE_TRACE; do
        # shellcheck disable=SC2053 # a pattern, on purpose
        [[ $key == $pattern ]] && { mkdir -p "$results/diag"; pre+=(--trace "$results/diag/$key.trace"); break; }
      done
      pre+=(--) ;;
    off)
      case $bench in
        llama-cpp) pre=(env GGML_CUDA_ENABLE_UNIFIED_MEMORY=1) ;; # stock UVM, no Ember
        hf-*) pre=("$EMBER_BUILD/bin/ember-run" --driver real --mode off --) ;; # without Ember it is resident: Ember passing through
      esac ;;
  esac
}

# record BENCH SCALE VARIANT PEER -- COMMAND...: run it (under Ember unless
# VARIANT is resident, off or a peer) and append the record.
record() {
  local bench=$1 scale=$2 variant=$3 peer=$4; shift 5
  wanted "$bench" "$scale" "$variant" "$peer" || return 0
  local stats; stats=$(mktemp /tmp/ember-suite-stats.XXXXXX.json)
  local log="$results/logs/$bench-$scale-$variant.log" pre
  prefix "$bench" "$scale" "$variant" "$stats"
  local out rc t0=$SECONDS
  # --foreground: the run is signalled alone, never a process group the matrix is in
  # (setup.sh turned errexit on: a failed or timed-out run must not end the matrix)
  # accelerate builds and initialises the model on the CPU first: minutes for 13B
  local limit=$timeout_s
  [ "$variant" = accelerate ] && limit=$((timeout_s * 3))
  rc=0; out=$(timeout --foreground --kill-after=10 "$limit" "${pre[@]}" "$@" 2>"$log") || rc=$?
  echo "$out" >>"$log"
  echo "$(date +%T) $bench $scale $variant: exit $rc after $((SECONDS - t0)) s" >>"$results/progress.log"
  python3 "$here/suite_record.py" --bench "$bench" --scale "$scale" --variant "$variant" --peer "$peer" \
    --budget "$budget_bytes" --gpu "$gpu" --stats "$stats" --rc "$rc" --timeout "$limit" \
    --wall $((SECONDS - t0)) --results "$results" --out "$out" >>"$jsonl"
  [ -e "$results/diag/$bench-$scale-$variant.trace" ] && { cp "$stats" "$results/diag/$bench-$scale-$variant.stats.json"
    gzip -f "$results/diag/$bench-$scale-$variant.trace"; }
  rm -f "$stats"
  tail -n 1 "$jsonl" | cut -c1-240
}

# rounds_records BENCH SCALE ROUNDS COMMAND_FN: ROUNDS rounds, each a process per variant in turn (the
# order turning each round); COMMAND_FN VARIANT ROUND sets cmd, what that process runs. One record a variant
# from all its processes (suite_record.py: the median of each process's median). For what one process per
# variant cannot tell apart: launch-bound token generation at 0.5x, whose processes of one variant spread by
# a third (EMBER_HF_ROUNDS, hf_rounds.py processes forking EMBER_HF_PROCESSES children each; off is Ember
# passing through), llama.cpp (EMBER_LLAMA_ROUNDS at 0.5x, EMBER_LLAMA_ROUNDS_BIG at 1.5x) and the kernels (EMBER_SUITE_PROCESSES).
rounds_records() {
  # name, not bench: llama_command reads llama()'s bench
  local name=$1 scale=$2 nr=$3 command_fn=$4 vs=() v r i cmd
  for v in resident off static adaptive mapped; do
    [ "$v" = off ] && [ "$scale" != 0.5 ] && continue
    wanted "$name" "$scale" "$v" "" && vs+=("$v")
  done
  [ ${#vs[@]} -gt 0 ] || return 0
  local dir t0=$SECONDS; dir=$(mktemp -d /tmp/ember-suite-rounds.XXXXXX)
  for ((r = 0; r < nr; r++)); do
    for ((i = 0; i < ${#vs[@]}; i++)); do
      v=${vs[(i + r) % ${#vs[@]}]}
      local pre rc=0
      prefix "$name" "$scale" "$v" "$dir/$v.$r.stats.json"
      "$command_fn" "$v" "$r"
      timeout --foreground --kill-after=10 "$timeout_s" "${pre[@]}" "${cmd[@]}" >>"$dir/$v.out" \
        2>>"$results/logs/$name-$scale-$v.log" || rc=$?
      echo "$(date +%T) $name $scale $v round $r: exit $rc" >>"$results/progress.log"
      [ $rc = 0 ] || echo $rc >"$dir/$v.rc" # a failed round fails the record
      [ -s "$dir/$v.$r.stats.json" ] && mv "$dir/$v.$r.stats.json" "$dir/$v.stats.json" # the last round's moves
    done
  done
  for v in "${vs[@]}"; do
    python3 "$here/suite_record.py" --bench "$name" --scale "$scale" --variant "$v" --budget "$budget_bytes" \
      --gpu "$gpu" --stats "$dir/$v.stats.json" --rc "$(cat "$dir/$v.rc" 2>/dev/null || echo 0)" \
      --timeout "$timeout_s" --wall $((SECONDS - t0)) --results "$results" --out "$(cat "$dir/$v.out" 2>/dev/null)" >>"$jsonl"
    tail -n 1 "$jsonl" | cut -c1-240
  done
  rm -rf "$dir"
}

# what Ember may keep resident: the budget's high watermark (EMBER_HIGH_WATERMARK's default)
high_bytes() { python3 -c "import sys; sys.path.insert(0, '$here'); import suite_record as s; print($budget_bytes * s.HIGH_WATERMARK // 100)"; }

ws_of() { python3 -c "print(int($budget_bytes * $1) // (1 << 21) * (1 << 21))"; }

# The link's rates the bounds are drawn from: what a device call runs on a card whose rates are not seeded.
rates() {
  say "rates: bandwidths and the sparse-access rates of each tier"
  timeout 90 "$EMBER_BUILD/bin/ember-uvm-bench" probe $((4 << 30)) >"$results/probe.json"
  timeout 90 "$EMBER_BUILD/bin/ember-sparse-probe" $((4 << 30)) >"$results/sparse-probe.json" 2>"$results/logs/sparse-probe.log"
  cat "$results/probe.json" "$results/logs/sparse-probe.log"
}

probe() {
  rates
  # the rate PyTorch's own kernels draw from mapped memory (an MoE's expert gathers), beside the probe's
  if python3 -c "import torch" 2>/dev/null; then
    python3 "$here/gather_probe.py" 20 >"$results/gather-probe.jsonl" 2>"$results/logs/gather-probe.log"
    "$EMBER_BUILD/bin/ember-run" --driver real --mode mapped --manage-all 1 --budget "$budget" -- \
      python3 "$here/gather_probe.py" 10 >>"$results/gather-probe.jsonl" 2>>"$results/logs/gather-probe.log"
  fi
}

# The processes of rounds_records (VARIANT ROUND), from their callers' locals.
kernel_command() { # kernels(): suite, w, ws
  cmd=("$suite" "$w" "$ws" "$runs")
  if [ "$1" = resident ]; then cmd+=(resident); fi
}
hf_command() { # hf(): arch, size, tokens
  cmd=(python3 "$here/hf_rounds.py" "$1" "$2" "$EMBER_HF_PROCESSES" "$arch" "$size" "$tokens" "$runs")
}
llama_command() { # llama(): bench
  cmd=("${bench[@]}" -ngl 99)
}

kernels() {
  local suite=$EMBER_BUILD/bin/ember-suite
  local names=${EMBER_SUITE_ONLY:-$("$suite" list | cut -d' ' -f1)}
  for scale in 0.5 1.5; do
    local ws; ws=$(ws_of $scale)
    for w in $names; do
      say "$w at ${scale}x ($ws bytes)"
      if [ "$EMBER_SUITE_PROCESSES" -gt 1 ]; then
        rounds_records "$w" $scale "$EMBER_SUITE_PROCESSES" kernel_command
        continue
      fi
      record "$w" $scale resident "" -- "$suite" "$w" "$ws" "$runs" resident
      local variants="static adaptive mapped"
      [ $scale = 0.5 ] && variants="$variants off"
      for v in $variants; do
        record "$w" $scale "$v" "" -- "$suite" "$w" "$ws" "$runs"
      done
      # the peer a CUDA programmer has: the program's own hints, its busiest arrays on the GPU up to
      # the share of the budget Ember may fill, the rest mapped from the host (suite/placed.cu)
      [ $scale = 1.5 ] && record "$w" $scale hints hints -- "$suite" "$w" "$ws" "$runs" placed "$(high_bytes)"
    done
  done
}

hf() {
  local tokens=8 big=(llama:13b mixtral:8x1.5b) small=(llama:4b mixtral:8x1b-12)
  [ "$quick" = 1 ] && { tokens=2; big=(llama:tiny mixtral:tiny); small=(llama:tiny mixtral:tiny); }
  for scale in 1.5 0.5; do
    local models=("${small[@]}")
    [ $scale = 1.5 ] && models=("${big[@]}")
    for m in "${models[@]}"; do
      local arch=${m%%:*} size=${m#*:} prog=(python3 "$here/hf_generate.py" "${m%%:*}" "${m#*:}" $tokens "$runs")
      say "hf-$arch $size at ${scale}x"
      if [ $scale = 0.5 ]; then
        rounds_records "hf-$arch" $scale "$EMBER_HF_ROUNDS" hf_command
        continue
      fi
      record "hf-$arch" $scale resident "" -- "${prog[@]}"
      for v in static adaptive; do record "hf-$arch" $scale "$v" "" -- "${prog[@]}"; done
      [ $scale = 1.5 ] && record "hf-$arch" $scale accelerate accelerate -- "${prog[@]}" accelerate "$budget_bytes"
      record "hf-$arch" $scale mapped "" -- "${prog[@]}"
    done
  done
}

llama() {
  [ -x "$EMBER_LLAMA_BENCH" ] && [ -d "$EMBER_GGUF_PY" ] || {
    echo "suite: llama-cpp not run: set EMBER_LLAMA_BENCH and EMBER_GGUF_PY" >&2
    printf '{"bench": "llama-cpp", "error": "not run: no llama-bench or gguf-py on this machine"}\n' >>"$jsonl"; return 0; }
  local tokens=8 pairs=(1.5:13b 0.5:4b)
  [ "$quick" = 1 ] && { tokens=2; pairs=(1.5:tiny 0.5:tiny); }
  for pair in "${pairs[@]}"; do
    local scale=${pair%%:*} shape=${pair#*:} model=${TMPDIR:-/tmp}/ember-suite-${pair#*:}.gguf
    # a size not asked for writes no model (the 13B shape's is 26 GB)
    case " $EMBER_SUITE_SCALES " in *" $scale "*) ;; *) continue ;; esac
    say "llama-cpp $shape at ${scale}x: writing the model"
    [ -s "$model" ] || python3 "$here/make_gguf.py" "$EMBER_GGUF_PY" "$model" "$shape" >"$results/logs/gguf-$shape.log" 2>&1
    local bench=("$EMBER_LLAMA_BENCH" -m "$model" -p 0 -n $tokens -r "$runs" -o jsonl)
    if [ "$scale" = 0.5 ]; then
      rounds_records llama-cpp "$scale" "$EMBER_LLAMA_ROUNDS" llama_command
      [ "$EMBER_LLAMA_KEEP_MODELS" = 1 ] || rm -f "$model"
      continue
    fi
    rounds_records llama-cpp "$scale" "$EMBER_LLAMA_ROUNDS_BIG" llama_command
    # llama.cpp's own partial offload: as many layers on the GPU as the budget holds, the rest on all CPU cores
    local ngl; ngl=$(python3 "$here/suite_record.py" --llama-layers "$shape" --budget "$budget_bytes")
    record llama-cpp "$scale" "ngl-$ngl" llama-ngl -- "${bench[@]}" -ngl "$ngl" -t "$(nproc)"
    [ "$EMBER_LLAMA_KEEP_MODELS" = 1 ] || rm -f "$model"
  done
}

overhead() {
  # bench: launch-overhead. Rounds of the variants interleaved, in turn forwards and backwards so that
  # drift hits them alike (the H200's rounds without Ember ranged 3.3-4.1 us); the report takes each
  # variant's difference to the same round's run without Ember. Not pinned: Ember's worker thread
  # would then share the program's core, which no user's program does.
  local lo=$EMBER_BUILD/bin/ember-launch-overhead out=$results/overhead.jsonl
  local order="none static static-no-events adaptive adaptive-no-events"
  : >"$out"
  for round in $(seq 1 "$EMBER_OVERHEAD_ROUNDS"); do
    local vs=$order
    [ $((round % 2)) = 0 ] && vs=$(tr ' ' '\n' <<<"$order" | tac | tr '\n' ' ')
    for v in $vs; do
      local pre=()
      case $v in
        # the variants name the event queue's state: its default changed (off since 245f287)
        static) pre=("$EMBER_BUILD/bin/ember-run" --driver real --mode static --uvm-events 1 --) ;;
        static-no-events) pre=("$EMBER_BUILD/bin/ember-run" --driver real --mode static --uvm-events 0 --) ;;
        adaptive) pre=("$EMBER_BUILD/bin/ember-run" --driver real --mode adaptive --uvm-events 1 --) ;;
        adaptive-no-events) pre=("$EMBER_BUILD/bin/ember-run" --driver real --mode adaptive --uvm-events 0 --) ;;
      esac
      for prog in c-loop torch-tiny-ops; do
        local cmd=("$lo" 20000)
        [ $prog = torch-tiny-ops ] && cmd=(python3 "$here/torch_tiny_ops.py" 20)
        local o; o=$("${pre[@]}" "${cmd[@]}" 2>>"$results/logs/overhead.log" | tail -n 1) || o=""
        python3 -c "import json,sys; r=json.loads(sys.argv[1]) if sys.argv[1].startswith('{') else {'error': 'run failed'}; r.update(bench='launch-overhead', program=sys.argv[2], variant=sys.argv[3], round=int(sys.argv[4]), gpu=sys.argv[5]); print(json.dumps(r))" \
          "$o" "$prog" "$v" "$round" "$gpu" >>"$out"
      done
    done
  done
  say "launch overhead"; cat "$out"
}

report() { python3 "$here/suite_report.py" "$results" "$results/REPORT.md"; }

steps=${*:-probe kernels hf llama overhead report}
for s in $steps; do
  case $s in
    rates|probe|kernels|hf|llama|overhead|report) $s ;;
    *) echo "usage: suite.sh [rates|probe] [kernels] [hf] [llama] [overhead] [report]  (--help: the settings)" >&2; exit 2 ;;
  esac
done
say "done"
