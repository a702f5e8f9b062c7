#!/usr/bin/env bash
# Session 45, at addb1e5 (a free into a captured stream forwarded to the driver). Pack with
# EMBER_PACK_TESTS=0; carry build-gpu. ember-capture-probe without Ember, then under Ember:
# manage-all adaptive and static (1 GiB budget), and adaptive without manage-all. Each run under
# Ember must give the driver's results case by case.
source tools/bench/device-call.sh c42-7
stage "capture probe"
timeout 60 build/bin/ember-capture-probe >"$R/plain.jsonl" 2>"$R/plain.log"
for v in "adaptive 1" "static 1" "adaptive 0"; do
  set -- $v
  stage "under ember: $1, manage-all $2"
  EMBER_MANAGE_ALL=$2 timeout 60 "$run" --driver real --mode "$1" --budget 1G --log info -- \
    build/bin/ember-capture-probe >"$R/ember-$1-$2.jsonl" 2>"$R/ember-$1-$2.log"
  python3 - "$R/plain.jsonl" "$R/ember-$1-$2.jsonl" <<'PY' | tee -a "$R/compare.txt"
import json, sys
a, b = ([json.loads(l) for l in open(f)] for f in sys.argv[1:])
diff = [(x, y) for x, y in zip(a, b) if x != y]
print(f"{sys.argv[2].rsplit('/', 1)[-1]}: {len(a) - len(diff)} of {len(a)} cases as without Ember ({len(b)} run)")
for x, y in diff:
    print("  without:", x, "\n  under:  ", y)
PY
done
finish
