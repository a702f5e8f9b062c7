#!/bin/bash
# A 1 TiB working set, every variant, must finish in well under a minute.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
t0=$(date +%s%N)
out=$("$SIM" --workload reread --working-set 1T --budget 512G --variant all --json)
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
echo "$out"
echo "1 TiB reread, all variants: ${ms} ms"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 5 ] || fail "expected 5 result lines"
# the limit is the issue's, for an ordinary build; a sanitizer build runs several times slower
limit=60000
ldd "$SIM" 2>/dev/null | grep -q -e libasan -e libtsan && limit=600000
[ "$ms" -lt "$limit" ] || fail "took ${ms} ms (limit $limit)"
echo PASS
