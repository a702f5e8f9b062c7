#!/usr/bin/env bash
# Session 52, call 9. Pack with EMBER_PACK_TESTS=0; carry build-gpu. Call 8's generation under
# expandable_segments:True ran 5x slower than under the default allocator (8.5 s against 1.69 per 8 tokens):
# how fast does a kernel read host memory made by cuMemCreate, against managed memory preferring the
# host and pinned memory? ember-vmm-host-probe at 4 GiB, twice.
source tools/bench/device-call.sh c48-9
for i in 1 2; do
  stage "probe $i"
  timeout 120 build/bin/ember-vmm-host-probe $((4 << 30)) | tee -a "$R/vmm-host-probe.jsonl"
done
finish
