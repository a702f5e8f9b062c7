#!/usr/bin/env bash
# Session 66, CPU only: the H200's hf-llama 13b trace at 1.5x (ab-29/call2, adaptive) replayed with
# and without its index_select launches' credit of the embedding table (allocation 0, 329 MB, which
# the word scan credits whole at every token: kernel 25, its second argument), static and adaptive,
# launches issued at the host's recorded pace. Run from the repository root after tools/setup.sh.
set -euo pipefail
here=tools/bench/results/suite/ab-62/replay-embedding
trace=tools/bench/results/suite/ab-29/call2/suite/diag/hf-llama-1.5-adaptive.trace.gz
tmp=$(mktemp -d)
zcat "$trace" >"$tmp/with.trace"
# drop allocation 0's ranges from kernel 25's launches, and recount them
awk '{ if ($1 == "L" && $4 == "25") { n = 0; r = ""; for (i = 6; i <= NF; i++) { if ($i ~ /^0:/) continue; r = r " " $i; n++ }
       print $1, $2, $3, $4, n r } else print }' "$tmp/with.trace" >"$tmp/without.trace"
for v in with without; do
  build/bin/ember-sim --trace "$tmp/$v.trace" --variant static,adaptive --launches async --json >"$here/$v.jsonl"
done
rm -rf "$tmp"
