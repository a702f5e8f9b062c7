#!/usr/bin/env bash
# session 28, call 10, for the next session (about four minutes): whether a move on Ember's private stream waits for a kernel
# that runs on the program's stream. In ab-28's call 8 star's tables at 97/93 waited 2.4 s behind a 42 MiB demotion
# whose copy took 26 ms once it began, while the queries ran reading the tables mapped. ember-demote-probe moves a
# 64 MiB victim as ops_driver.c does, 100 ms into a kernel of about a second: one whose blocks all stay until it ends
# (reading mapped memory, or device memory), one of many short blocks, and the victim's promotion under the first.
# If the demotion under the first kernel begins only as that kernel ends, room for a table must be made before
# the launch that reads it (ordered before it on the GPU), not while its query runs.
# Then what the machine can give the host's touches (EMBER_POPULATE_HOST, on by default since 4b603ab, take at most
# half of MemAvailable or the cgroup's limit: ab-28's call 9 saw numactl report one 4.4 GB node on a VM that held
# 26 GB models), and this card's link rates against the seeds' (bitonic at 1.5x took 24.5-32 s in call 9 against
# 14.8 in an earlier call, with nothing moved).
# Last, the GPU tests under the defaults since ab-26's call 1 (97/93, the host's touches on, their limit).
source tools/bench/device-call.sh c10
(head -5 /proc/meminfo; cat /proc/self/cgroup; for f in memory.max memory.current; do
   echo "$f $(cat /sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)/$f 2>&1)"; done) >"$R/memory.txt" 2>&1
stage "demote probe"
timeout 120 build/bin/ember-demote-probe $((2 << 30)) >"$R/demote-probe.json" 2>"$R/demote-probe.err"
echo "rc $?" >>"$R/demote-probe.err"
pack
stage "rates"
EMBER_RESULTS=$R/rates timeout 150 bash tools/bench/suite.sh rates >"$R/rates.log" 2>&1
stage "gpu tests"
(cd build && LD_LIBRARY_PATH=$PWD/devlibs timeout 150 ctest -L gpu --output-on-failure >"$R/ctest-gpu.log" 2>&1)
stage done
pack
tail -3 "$R/ctest-gpu.log"
cat "$R/memory.txt" "$R/demote-probe.json" "$R/demote-probe.err" "$R/rates.log" "$R/progress.log"
