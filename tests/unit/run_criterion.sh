#!/usr/bin/env bash
# One Criterion program as one ctest test, with its cases counted: the
# program must run every case it lists, less those EMBER_CRITERION_SKIP names
# (space-separated SUITE/CASE; tests/CMakeLists.txt gives each one's
# reason), or the test fails, whatever the program's own exit status. A
# runner that starts no case at all, as Criterion's did under TSan, fails
# here instead of passing.
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

# Counted from Criterion's TAP report, which has a line for every case: a
# case left out by the filter reads "# SKIP test was skipped", Criterion's
# words for a case it did not start. A case that ran and skipped itself
# (cr_skip_test) gives its reason there instead, and counts as run: so such
# a skip must give one.
tap=$(mktemp)
trap 'rm -f "$tap"' EXIT
"$prog" "${filter[@]}" --tap="$tap" "$@"
rc=$?

want=$(( ${#cases[@]} - ${#skip[@]} ))
reported=$(grep -cE '^(not )?ok ' "$tap")
unstarted=$(grep -cE '^ok .*  # SKIP test was skipped$' "$tap")
ran=$(( reported - unstarted ))
echo "$name: ran $ran of ${#cases[@]} cases${skip[*]:+, left out: ${skip[*]}}"
if [ "$ran" != "$want" ] || [ "$reported" != "${#cases[@]}" ]; then
  echo "$name: expected $want of its ${#cases[@]} cases to run; the report has $reported, $ran of them run" >&2
  exit 1
fi
exit "$rc"
