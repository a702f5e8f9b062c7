#!/usr/bin/env bash
# Two builds of Ember on one program, interleaved in one session, so that a
# change is judged against its parent on the same machine at the same time.
#   ab.sh LABEL_A SHIM_A LABEL_B SHIM_B RUNS -- ember-run options -- program [args]
# One JSON record per run on stdout: label, run, wall seconds, and the
# program's own last JSON line (its "seconds" where it times a phase).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../setup.sh"
la=$1 sa=$2 lb=$3 sb=$4 runs=$5; shift 5
[ "${1:-}" = -- ] && shift
opts=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
shift
for ((i = 1; i <= runs; i++)); do
  for pair in "$la=$sa" "$lb=$sb"; do
    label=${pair%%=*} shim=${pair#*=}
    t0=$(date +%s.%N)
    out=$("$EMBER_BUILD/bin/ember-run" --shim "$shim" "${opts[@]}" -- "$@" 2>/dev/null | grep '^{' | tail -1)
    t1=$(date +%s.%N)
    printf '{"label": "%s", "run": %d, "wall_seconds": %.3f, "program": %s}\n' "$label" "$i" \
      "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "${out:-null}"
  done
done
