#!/usr/bin/env bash
# Session 39, call 3: ember-backing-probe (tools/bench/backing_probe.cu) at 4 GiB, twice: the mapped tier's
# sparse and streaming reads against how its host pages were made (the host's touches in order, touches
# that begin with one page a 2 MiB block, one prefetch to the host) and against the GPU's mappings
# (accessed-by, or the GPU's first reads faulting them in); the driver's CPU chunk sizes and the kernel's
# transparent huge pages as this machine shows them.
source tools/bench/device-call.sh c3
for k in 0 1; do
  stage "backing-$k"
  timeout 120 build/bin/ember-backing-probe $((4 << 30)) >"$R/backing-probe-$k.json" 2>"$R/backing-probe-$k.log"
  echo "rc $?" >>"$R/backing-probe-$k.log"
  cat "$R/backing-probe-$k.log"
  pack
done
cat /sys/module/nvidia_uvm/parameters/uvm_cpu_chunk_allocation_sizes /sys/kernel/mm/transparent_hugepage/enabled \
  /sys/kernel/mm/transparent_hugepage/defrag >"$R/sysfs.txt" 2>&1
ls /sys/module/nvidia_uvm/parameters/ >>"$R/sysfs.txt" 2>&1
stage done
pack
cat "$R"/backing-probe-*.json
cat "$R/progress.log"
