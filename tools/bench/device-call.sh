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
#   time_left  whether more than ${1:-60} of the call's 540 seconds are left
#   records    a line per record in $R/*/suite.jsonl: its folder, bench,
#              variant, seconds, runs, bytes demoted and error
#   llama_runs a line per llama-bench process run directly ($R/llama-*.jsonl):
#              its mean and samples in seconds, and the bytes its
#              .stats.json says were promoted and demoted
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
time_left() { [ "$SECONDS" -lt $((540 - ${1:-60})) ]; }
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
dev = json.load(open(stats))['devices'][0] if os.path.exists(stats) else {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(name, r.get('avg_ns', 0) / 1e9, [round(x / 1e9, 4) for x in r.get('samples_ns', [])],
          dev.get('bytes_promoted'), dev.get('bytes_demoted'))
" "$f"
  done
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
