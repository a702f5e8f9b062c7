#!/usr/bin/env bash
# session 28, call 10, for the next session (about 30 s): whether a move on Ember's private stream waits for a kernel
# that runs on the program's stream. In ab-28's call 8 star's tables at 97/93 waited 2.4 s behind a 42 MiB demotion
# whose copy took 26 ms once it began, while the queries ran reading the tables mapped. ember-demote-probe moves a
# 64 MiB victim as ops_driver.c does, 100 ms into a kernel of about a second: one whose blocks all stay until it ends
# (reading mapped memory, or device memory), one of many short blocks, and the victim's promotion under the first.
# If the demotion under the first kernel begins only as that kernel ends, room for a table must be made before
# the launch that reads it (ordered before it on the GPU), not while its query runs.
source tools/bench/device-call.sh c10
stage "demote probe"
timeout 120 build/bin/ember-demote-probe $((2 << 30)) >"$R/demote-probe.json" 2>"$R/demote-probe.err"
echo "rc $?" >>"$R/demote-probe.err"
stage done
pack
cat "$R/demote-probe.json" "$R/demote-probe.err" "$R/progress.log"
