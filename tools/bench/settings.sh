# The benchmark harness's settings (suite.sh and ember-suite under it,
# run.sh, validate.sh): each variable once, with its default and what it
# does. Sourced by each of those scripts, which sets every default not
# already set and exports it; `suite.sh --help` prints the table. Ember's own EMBER_* variables are
# another table's (shim/config/config.def: `ember-run --help`, ember(7)).
# NAME|DEFAULT|WHAT ($here: tools/bench)
bench_settings=(
  "EMBER_RESULTS||where the records, logs and diagnostics go (empty: results/suite for suite.sh, results for run.sh, results/validation for validate.sh, under tools/bench)"
  "EMBER_BENCH_BUDGET|16G|the budget Ember is given, a size with its unit"
  "EMBER_BENCH_UVM_EVENTS|1|run.sh uvm: Ember's UVM event queue in its runs (ember-run --uvm-events)"
  "EMBER_JSONL||run.sh uvm: the file its records go to (empty: uvm.jsonl in the results)"
  "EMBER_VALIDATE_VARIANTS|mapped static adaptive|validate.sh: the variants each program runs under"
  "EMBER_GGUF||validate.sh: the model llama-bench reads (with EMBER_LLAMA_BENCH)"
  "EMBER_BENCH_RUNS|3|runs per record, of which the median is kept"
  "EMBER_BENCH_QUICK|0|1: a smoke test (a 1G budget, one run, tiny models)"
  "EMBER_SUITE_ONLY||a space-separated subset of the kernels' workloads (empty: every one, ember-suite list)"
  "EMBER_SUITE_SCALES|0.5 1.5|the working sets to run, as multiples of the budget"
  "EMBER_SUITE_VARIANTS||the variants to run, space-separated (empty: every one)"
  "EMBER_SUITE_SKIP||records not to run (bench-scale-variant patterns, such as 'hf-llama-1.5-*')"
  "EMBER_SUITE_TRACE||records (patterns, such as 'nw-1.5-*') whose Ember runs also keep a trace and their statistics in \$EMBER_RESULTS/diag"
  "EMBER_SUITE_WALL|100000|seconds after which no record starts (it is written as not run)"
  "EMBER_SUITE_TIMEOUT|150|seconds one process may take"
  "EMBER_SUITE_MAX_SECONDS|20|ember-suite: no further run starts once its runs took this many seconds (the mapped tier can be very slow); unset when it runs alone: no limit"
  "EMBER_SUITE_FRESH|0|ember-suite: 1 makes the data afresh for every run, so that every run is cold"
  "EMBER_SUITE_PLACE_BY|traffic|ember-suite's placed runs (hints): traffic keeps the arrays read and written most per byte on the GPU; reads keeps those read most per byte first and leaves those only written mapped (a mapped write is posted, a mapped read waits)"
  "EMBER_SUITE_PROCESSES|1|the kernels: each record from this many processes, a process per variant in turn"
  "EMBER_HF_ROUNDS|2|token generation at 0.5x: rounds of a process per variant in turn (hf_rounds.py)"
  "EMBER_HF_PROCESSES|2|token generation at 0.5x: the measured children each of those processes forks"
  "EMBER_LLAMA_BENCH||llama.cpp's llama-bench (DESIGN.md builds it); llama is not run without it and EMBER_GGUF_PY"
  "EMBER_GGUF_PY||llama.cpp's gguf-py folder, which writes the model (make_gguf.py)"
  "EMBER_LLAMA_ROUNDS|3|llama.cpp at 0.5x: rounds of a llama-bench process per variant in turn"
  "EMBER_LLAMA_ROUNDS_BIG|1|llama.cpp at 1.5x: the same (a process takes about 25 s on the H200)"
  "EMBER_LLAMA_KEEP_MODELS|0|1: keep the GGUF models in \${TMPDIR:-/tmp} after their records, for the next suite.sh llama (a device call's processes in turn; writing the 13B model takes some 18 s on the H200)"
  "EMBER_OVERHEAD_ROUNDS|5|launch overhead: rounds of the variants, interleaved"
)

# Set and export each default not already set.
bench_settings_apply() {
  local s name def
  for s in "${bench_settings[@]}"; do
    IFS='|' read -r name def _ <<<"$s"
    [ -n "${!name+set}" ] || printf -v "$name" '%s' "$def"
    export "${name?}"
  done
}

# The table, as help.
bench_settings_help() {
  local s name def what
  for s in "${bench_settings[@]}"; do
    IFS='|' read -r name def what <<<"$s"
    printf '  %-24s %s%s\n' "$name" "$what" "${def:+ ($def)}"
  done
}
