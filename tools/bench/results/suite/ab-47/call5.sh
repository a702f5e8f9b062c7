#!/usr/bin/env bash
# Session 51, call 5. Carry build-gpu, with vmm_reset.c built by hand as build-gpu/bin/ember-vmm-reset-probe.
# Whether a primary context's reset frees the physical allocations of the virtual memory API
# (cuMemCreate), which Ember counts against the budget until cuMemRelease and does not forget at a
# teardown: without Ember, then under it (adaptive, 1 GiB), at EMBER_LOG=debug.
source tools/bench/device-call.sh c47-5
timeout 30 build/bin/ember-vmm-reset-probe >"$R/plain.txt" 2>&1; echo "rc $?" >>"$R/plain.txt"
timeout 30 "$run" --driver real --mode adaptive --budget 1G --log debug -- build/bin/ember-vmm-reset-probe \
  >"$R/ember.txt" 2>"$R/ember.err"; echo "rc $?" >>"$R/ember.txt"
cat "$R/plain.txt" "$R/ember.txt"; grep -E "warn|reset|forgets" "$R/ember.err" | head
finish
