#!/usr/bin/env bash
# session 29, call 1: ab-28's call 10, never run (no machine was lent), with the exchange of df189a5 tried first.
# (1) Star at 1.5x under adaptive, three processes, traced: df189a5 exchanges a column a flight reads twice for
# one it reads four or six times (replayed: 1.46 -> 1.09 s for the three runs at 97/93). (2) Whether a move on
# Ember's private stream waits for a kernel on the program's stream (ember-demote-probe): in ab-28's call 8
# star's tables waited 2.4 s behind a 42 MiB demotion whose copy took 26 ms once it began. (3) What the machine
# gives the host's touches (memory.txt). (4) bfs at 1.5x, static and adaptive, three processes each in turn:
# adaptive was 0.949 of static with one process each, their runs overlapping. (5) The GPU tests under the
# defaults since ab-26 (97/93, the host's touches on). (6) The link's rates, as time allows.
source tools/bench/device-call.sh c1
(head -5 /proc/meminfo; cat /proc/self/cgroup; for f in memory.max memory.current; do
   echo "$f $(cat /sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)/$f 2>&1)"; done) >"$R/memory.txt" 2>&1
stage "star adaptive, 3 processes"
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_PROCESSES=3 \
  EMBER_SUITE_ONLY=star EMBER_SUITE_TRACE='star-1.5-adaptive' EMBER_SUITE_TIMEOUT=60 \
  timeout 150 bash tools/bench/suite.sh kernels >"$R/suite-star.log" 2>&1
pack
stage "demote probe"
timeout 120 build/bin/ember-demote-probe $((2 << 30)) >"$R/demote-probe.json" 2>"$R/demote-probe.err"
echo "rc $?" >>"$R/demote-probe.err"
pack
stage "bfs static and adaptive, 3 processes each"
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS="static adaptive" EMBER_SUITE_PROCESSES=3 \
  EMBER_SUITE_ONLY=bfs EMBER_SUITE_TIMEOUT=60 timeout 120 bash tools/bench/suite.sh kernels >"$R/suite-bfs.log" 2>&1
pack
stage "gpu tests"
(cd build && LD_LIBRARY_PATH=$PWD/devlibs timeout 150 ctest -L gpu --output-on-failure >"$R/ctest-gpu.log" 2>&1)
pack
if time_left 100; then
  stage rates
  EMBER_RESULTS=$R/rates timeout $((540 - SECONDS - 20)) bash tools/bench/suite.sh rates >"$R/rates.log" 2>&1
fi
stage done
pack
tail -3 "$R/ctest-gpu.log"
python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(r.get('bench'), r.get('variant'), round(r.get('seconds') or 0,4), r.get('runs_seconds'), r.get('bound_seconds'), r.get('error'))
" "$R/suite/suite.jsonl"
cat "$R/memory.txt" "$R/demote-probe.json" "$R/demote-probe.err" "$R/progress.log"
