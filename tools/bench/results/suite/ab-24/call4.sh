#!/usr/bin/env bash
# session 24, call 4: where Ember's launch hook spends 1.2-1.8 us a launch in transformers token generation
# (call 3's op profile: cudaLaunchKernel's self time 4.4 us a launch under off, 6.2 static, 5.7 adaptive),
# where the simulated driver's launch loop shows 0.35-0.45 us on the build machine. This machine's clock
# source and CPU; call_probe (ab-24/src): the calls the hook makes, timed alone; ember-callbench --launch
# (the simulated driver, PyTorch's argument shape) here, caches warm and written over between launches;
# then perf, if this machine lets it, over op_profile.py under static.
set -uo pipefail
here=$PWD
source tools/bench/device-unpack.sh
R=/tmp/c4; mkdir -p $R
pack() { tar -C $R -czf "$OUT/c4.tar.gz" .; }
{ cat /sys/devices/system/clocksource/clocksource0/current_clocksource; lscpu | head -20; nproc; which perf;
  cat /proc/sys/kernel/perf_event_paranoid; } >$R/machine.txt 2>&1
build/call_probe >$R/call-probe.jsonl 2>&1
for c in 0 1048576; do for m in static adaptive; do
  CALLBENCH_ARGS=torch CALLBENCH_COLD=$c EMBER_MODE=$m EMBER_BUDGET=16G EMBER_LOG=error timeout 60 \
    build/bin/ember-callbench --launch $here/build/lib/libember-sim.so $here/build/lib/libember.so $m >>$R/callbench.jsonl 2>>$R/callbench.log
done; done
pack
if command -v perf >/dev/null; then
  (cd tools/bench && timeout 120 perf record -F 4999 -g -o $R/perf.data -- $here/build/bin/ember-run --driver real --mode static \
     --manage-all 1 --budget 16G -- python3 results/suite/ab-24/src/op_profile.py mixtral 8x1b-12 8 >$R/prof-static.json 2>$R/perf-record.log)
  perf report -i $R/perf.data --no-children --sort dso,sym --stdio 2>/dev/null | head -150 >$R/perf-report.txt
  perf report -i $R/perf.data --no-children --sort dso --stdio 2>/dev/null | head -40 >$R/perf-dso.txt
  rm -f $R/perf.data
fi
pack
cat $R/machine.txt $R/call-probe.jsonl; cut -c1-220 $R/callbench.jsonl; head -40 $R/perf-dso.txt 2>/dev/null; grep -i ember $R/perf-report.txt | head -40
