#!/usr/bin/env bash
# One Criterion program as one ctest test, with its cases counted: the
# program must run every case it lists, less those EMBER_CRITERION_SKIP names
# (space-separated SUITE/CASE; tests/CMakeLists.txt gives each one's reason),
# or the test fails. A runner that starts no case at all, as Criterion's did
# under TSan, fails here instead of passing.
#   run_criterion.sh PROGRAM [PROGRAM'S OPTIONS]...
set -uo pipefail
prog=$1
shift
name=$(basename "$prog")

# --list prints "suite: N tests", then a line a case: "├── case" or "└── case"
# ("|-- case", "`-- case" in ASCII).
listing=$("$prog" --list 2>&1) || { echo "$name --list failed: $listing" >&2; exit 1; }
cases=() suites=" "
while IFS= read -r line; do
  if [[ $line =~ ^(├──|└──|\|--|\`--)\ (.+)$ ]]; then
    cases+=("$suite/${BASH_REMATCH[2]% (skipped)}")
  elif [[ $line =~ ^(.+):\ [0-9]+\ tests?$ ]]; then
    suite=${BASH_REMATCH[1]}
    suites+="$suite "
  fi
done <<<"$listing"
[ ${#cases[@]} -gt 0 ] || { echo "$name lists no case: $listing" >&2; exit 1; }

# The names to skip that belong to this program's suites go into Criterion's
# --filter; one of its suites naming no case of it is a stale entry, an error.
skip=()
for s in ${EMBER_CRITERION_SKIP:-}; do
  [[ $suites == *" ${s%%/*} "* ]] || continue
  found=0
  for c in "${cases[@]}"; do
    [ "$c" = "$s" ] && found=1
  done
  [ $found = 1 ] || { echo "$name has no case $s (EMBER_CRITERION_SKIP)" >&2; exit 1; }
  skip+=("$s")
done
filter=()
if [ ${#skip[@]} -gt 0 ]; then
  filter=("--filter=!($(IFS='|'; echo "${skip[*]}"))")
fi

out=$(mktemp) json=$(mktemp)
trap 'rm -f "$out" "$json"' EXIT
"$prog" "${filter[@]}" --json="$json" "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}

want=$(( ${#cases[@]} - ${#skip[@]} ))
ran=$(sed -e 's/\x1b\[[0-9;]*m//g' "$out" | sed -n 's/.*Synthesis: Tested: \([0-9]*\).*/\1/p' | tail -n 1)
# a case that ran and skipped itself (cr_skip_test: no root here, say) ran; one the filter left out did not
self_skipped=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(t["status"] == "SKIPPED" and t.get("messages") != ["The test was skipped."]
          for s in d["test_suites"] for t in s["tests"]))' "$json" 2>/dev/null || echo 0)
[ -n "$ran" ] && ran=$((ran + self_skipped))
echo "$name: ran ${ran:-no} of ${#cases[@]} cases${skip[*]:+, left out: ${skip[*]}}"
if [ "${ran:-}" != "$want" ]; then
  echo "$name: expected $want cases to run, ran ${ran:-none}" >&2
  exit 1
fi
exit "$rc"
