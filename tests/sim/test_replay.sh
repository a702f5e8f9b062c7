#!/bin/bash
# A real run recorded on the H200 (tools/bench/validate.sh: ember-uvm-bench
# reread, 24 GiB, 20 passes, 16 GiB budget, Ember-static), replayed: the
# model's time for the timed phase is within 25% of the 4.412 s measured,
# and it promotes the same 14.40 GiB the shim did.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
traces=${2:?usage: test_replay.sh ember-sim results/validation}
out=$("$SIM" --trace "$traces/reread-static.trace.gz" --variant static --json 2>/dev/null)
t=$(field "$out" window_seconds)
echo "reread static replayed: ${t}s (measured 4.412 s)"
check "$t > 4.412 * 0.75 && $t < 4.412 * 1.25" "replay within 25% of the measurement"
# recorded at Table 1's 90% watermark, which its D line carries, whatever the shim's default now
check "$(field "$out" bytes_promoted) == 15460204544" "the same bytes promoted as the shim's own record"
more=$("$SIM" --trace "$traces/reread-static.trace.gz" --variant static --param high_watermark=97 --param low_watermark=93 --json 2>/dev/null)
check "$(field "$more" bytes_promoted) > 15460204544" "--param's watermarks replace the recorded ones"
# Under another variant the same recording answers a what-if: stock UVM collapses.
u=$(field "$("$SIM" --trace "$traces/reread-static.trace.gz" --variant uvm --json 2>/dev/null)" window_seconds)
check "$u > 5 * $t" "the same run under stock UVM is at least 5x slower (${u}s)"
# Launch order replays: a window of 48 MiB slides 2 MiB per launch through 512 MiB at a
# 64 MiB budget. Traced with the argument it came from (version 2), the regions it leaves
# behind depart and make room; without, nothing is followed and the window stays mapped.
slide_trace() { # slide_trace ARG: the trace, each range ending in ARG
  awk -v arg="$1" 'BEGIN { M = 1048576; print "ember-trace 2"; print "D 0", 64*M, 58*M, 54*M; print "A 0 0 0", 512*M, "m"
    t = 1000; for (s = 0; s < 400; s++) { t += 2000000; printf "L %d 1 0 1 0:%d:%d%s\n", t, (s*2*M) % (448*M), 48*M, arg }
    print "E", t + 1000 }'
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
slide_trace :0 >"$tmp/followed.trace"; slide_trace "" >"$tmp/plain.trace"
followed=$("$SIM" --trace "$tmp/followed.trace" --variant adaptive --json 2>/dev/null)
plain=$("$SIM" --trace "$tmp/plain.trace" --variant adaptive --json 2>/dev/null)
check "$(field "$followed" bytes_demoted) > 0" "a followed slide departs what it left behind ($(field "$followed" bytes_demoted) bytes demoted)"
# without, no region departs; what it demotes is one exchange (policy.c, read_more_per_cycle): the first
# regions, which the window covers 1 to 12 times a cycle, for regions it covers 24 times, under the budget
check "$(field "$plain" bytes_demoted) < 64 * 1048576" "without the argument nothing departs ($(field "$plain" bytes_demoted) bytes exchanged)"
check "$(field "$followed" bytes_promoted) > 2 * $(field "$plain" bytes_promoted)" "the followed window is promoted as it moves"
# --moves: R lines say why they gave way, as the shim's EMBER_LOG=debug does
"$SIM" --trace "$tmp/followed.trace" --variant adaptive --moves "$tmp/moves" >/dev/null 2>&1
grep -qE '^R [0-9]+ [0-9]+ departed at a launch, the first allocation 0 region [0-9]+ \(demand' "$tmp/moves" ||
	fail "no R line names the departed: $(grep -m3 '^R' "$tmp/moves")"
echo "ok: --moves names why regions gave way ($(grep -c '^R' "$tmp/moves") R lines)"
# The trial rules replay as --param: radix sort's shape (test_policy's sort flight) on the recorded clock.
# Each flight reads `seldom` whole twice, then four passes over `keys` a chunk a launch, two of them in
# chunks of 2.5 regions, so the regions at the chunks' edges are covered in part by two launches. At the
# defaults those edges look hottest, cannot be ranked, and end every pass: nothing is exchanged. Under
# EMBER_PIECES they are credited their parts and ranked, and keys takes seldom's room whole; partial rank
# leaves the edges out (two fewer regions).
sort_trace() {
  awk 'BEGIN { M = 1048576; print "ember-trace 2"; print "D 0", 64*M, 58*M, 54*M
    print "A 0 0 0", 40*M, "m"; print "A 0 1 0", 40*M, "m"; t = 1000000
    for (c = 0; c < 8; c++) {
      for (q = 0; q < 2; q++) { t += 1000000; printf "L %d 1 0 1 0:0:%d:0\n", t, 40*M }
      for (p = 0; p < 4; p++) { chunk = (p % 2) ? 10*M : 5*M
        for (at = 0; at < 40*M; at += chunk) { t += 100000; printf "L %d 1 1 1 1:%d:%d:0\n", t, at, chunk } }
      t += 200000000 }
    print "E", t }'
}
sort_trace >"$tmp/sort.trace"
sorted() { "$SIM" --trace "$tmp/sort.trace" --variant adaptive --launches recorded --json "$@" 2>/dev/null; }
plain=$(field "$(sorted)" bytes_demoted)
pieces=$(field "$(sorted --param pieces=1)" bytes_demoted)
ranked=$(field "$(sorted --param partial_rank=1)" bytes_demoted)
check "$plain == 0" "at the defaults the chunk edges end every pass: nothing exchanged"
check "$pieces == 24 * 1048576" "under pieces=1 keys takes seldom's room whole (${pieces} bytes exchanged)"
check "$ranked < $pieces && $ranked > 0" "partial_rank=1 exchanges all but the edges (${ranked} bytes)"
# The timed window starts at the last flush a launch follows: a program that flushes once more on its
# way out (the suite's kernels do, for their statistics) is still timed from its last phase's flush.
phases_trace() { # phases_trace TAIL: two phases of 20 launches over 256 MiB, each after a flush, then TAIL
  awk -v tail="$1" 'BEGIN { M = 1048576; print "ember-trace 2"; print "D 0", 1024*M, 900*M, 850*M
    print "A 0 0 0", 256*M, "m"; t = 1000
    for (p = 0; p < 2; p++) { print "X", t; for (s = 0; s < 20; s++) { t += 100000; printf "L %d 1 0 1 0:0:%d\n", t, 256*M } }
    if (tail != "") print tail, t + 1000; print "E", t + 2000 }'
}
phases_trace "" >"$tmp/phases.trace"; phases_trace X >"$tmp/phases-flushed.trace"
plain=$(field "$("$SIM" --trace "$tmp/phases.trace" --variant static --json 2>/dev/null)" window_seconds)
flushed=$(field "$("$SIM" --trace "$tmp/phases-flushed.trace" --variant static --json 2>/dev/null)" window_seconds)
whole=$(field "$("$SIM" --trace "$tmp/phases.trace" --variant static --json 2>/dev/null)" sim_seconds)
check "$flushed == $plain" "a flush on the way out leaves the timed window the last phase's (${flushed}s)"
check "$plain < 0.75 * $whole" "the window is the last phase, not the run (${plain}s of ${whole}s)"
# --launches recorded: every event on the trace's own clock, the kernels costing nothing of their own, so
# the run takes the recorded run's length whatever the model would make of its launches
rec=$("$SIM" --trace "$tmp/phases.trace" --variant static --launches recorded --json 2>/dev/null)
check "$(field "$rec" sim_seconds) == 0.004003" "a recorded replay ends when the recording did ($(field "$rec" sim_seconds)s)"
check "$(field "$rec" launches) == 40" "and issues every launch"
# A host phase (Q): a flight of queries, seldom read by two launches and often by four, fills the budget
# with the first to come; the host then works (its check) and Ember's worker sees the phase while it lasts
# (Q ... 1). The replay ends the flight's episode there with its exchange, as the shim does
# (EMBER_PHASE_EXCHANGE), so the next flight, timed from its flush, finds what it reads most resident.
flight_trace() { # two flights of 6 launches over two 64 MiB columns at a 96 MiB budget, a host phase between
  awk 'BEGIN { M = 1048576; print "ember-trace 2"; printf "D 0 %d %d %d\n", 96*M, 93*M, 89*M
    printf "A 0 0 0 %d m\nA 0 1 0 %d m\n", 64*M, 64*M; t = 1000
    for (f = 0; f < 2; f++) {
      if (f) printf "X %d\n", t
      for (k = 0; k < 2; k++) { t += 100000; printf "L %d 1 0 1 0:0:%d\n", t, 64*M }
      for (k = 0; k < 4; k++) { t += 100000; printf "L %d 1 1 1 1:0:%d\n", t, 64*M }
      t += 100000; printf "W %d %d\n", t, t + 50000000; t += 50000000
      if (!f) { t += 300000000; printf "Q %d 1 1\n", t; t += 2000000000 }
    }
    printf "E %d\n", t + 1000 }'
}
flight_trace >"$tmp/flight.trace"
on=$("$SIM" --trace "$tmp/flight.trace" --variant adaptive --launches async --moves "$tmp/flight-moves" --json 2>/dev/null)
off=$("$SIM" --trace "$tmp/flight.trace" --variant adaptive --launches async --param phase_exchange=0 --json 2>/dev/null)
grep -qE '^R [0-9]+ [0-9]+ exchanged at a host phase, the first allocation 0 region 0 .* an episode 512, .* for allocation 1 region' "$tmp/flight-moves" ||
	fail "no R line names the host phase's exchange: $(grep -m3 '^R' "$tmp/flight-moves")"
check "$(field "$off" bytes_demoted) == 0" "without it nothing is exchanged: a flight alone gives no reuse gap"
check "$(field "$on" window_seconds) < 0.75 * $(field "$off" window_seconds)" \
	"the flight after the phase is faster with its exchange ($(field "$on" window_seconds) s against $(field "$off" window_seconds))"
# bfs at 1.5x on the H200 under 5e07a3b (ab-33's call 1): its exchanges of vertex regions for edge regions,
# decided on the recorded clock (a burst of short levels against one long level), which sync and async
# replays never made. Replayed on that clock, the head's policy (touches of one cycle) moves nothing back,
# as on the H200 at 5183824 (call 2: nothing demoted in four processes).
bfs="$(dirname "$0")/../../tools/bench/results/suite/ab-33/call1/bfs-adaptive-1/diag/bfs-1.5-adaptive.trace.gz"
b=$("$SIM" --trace "$bfs" --variant adaptive --launches recorded --json 2>/dev/null)
check "$(field "$b" bytes_demoted) == 0" "bfs's recorded run replayed on its clock demotes nothing ($(field "$b" bytes_demoted) bytes)"
# star at 1.5x on the H200 at d632657 (ab-38's call 4, traced): the worker saw the host phase after each run
# (its Q lines) and exchanged the columns the first run read least for those it read most. Replayed on the
# recorded clock, the episode's exchange moves what the shim moved, within 2%; without it, the second run's
# per-cycle exchange moves more.
star="$(dirname "$0")/../../tools/bench/results/suite/diag/star-1.5-adaptive.trace.gz"
grep -q '^Q [0-9]* 1 1$' <(zcat "$star") || fail "star's diag trace has no Q line of a phase the worker saw"
s=$("$SIM" --trace "$star" --kernel-reads star --variant adaptive --launches recorded --json 2>/dev/null)
s0=$("$SIM" --trace "$star" --kernel-reads star --variant adaptive --launches recorded --param phase_exchange=0 --json 2>/dev/null)
check "$(field "$s" bytes_promoted) > 0.98 * 22901332852 && $(field "$s" bytes_promoted) < 1.02 * 22901332852" \
	"star's replay promotes what the H200 did ($(field "$s" bytes_promoted) bytes against 22901332852)"
check "$(field "$s" bytes_demoted) > 0.98 * 6236993880 && $(field "$s" bytes_demoted) < 1.02 * 6236993880" \
	"and demotes it ($(field "$s" bytes_demoted) bytes against 6236993880)"
check "$(field "$s0" bytes_demoted) > 1.1 * $(field "$s" bytes_demoted)" \
	"without the phase's exchange the runs' own exchange demotes more ($(field "$s0" bytes_demoted) bytes)"
# What launches named while there was nothing to decide (shim/policy/policy.h, ember_policy_named_idle): a
# 16 MiB array read every 100 ms while the budget has room, resident and so uncredited after its first touch,
# then a 48 MiB array read twice 500 ms apart, which fills the budget. Its second read finds the first array
# named 0.6 s before, within two of its own cycles: nothing is older, nothing gives way. Counted from its first
# touch alone, it would be older and give way.
idle_trace() {
  awk 'BEGIN { M = 1048576; S = 1000000000; print "ember-trace 2"; print "D 0", 64*M, 58*M, 54*M
    print "A 1000 0 0", 16*M, "m"
    for (t = 0.001; t < 0.95; t += 0.1) printf "L %d 1 0 1 0:0:%d\n", t*S, 16*M
    printf "A %d 1 0 %d m\n", 1.0*S, 48*M
    for (t = 1.0; t < 1.6; t += 0.5) printf "L %d 1 1 1 1:0:%d\n", t*S + 1000, 48*M
    printf "E %d\n", 2.5*S }'
}
idle_trace >"$tmp/idle.trace"
idle=$("$SIM" --trace "$tmp/idle.trace" --variant adaptive --launches recorded --json 2>/dev/null)
check "$(field "$idle" bytes_promoted) > 0 && $(field "$idle" bytes_demoted) == 0" \
	"an array named while there was room keeps its place at the first pressure ($(field "$idle" bytes_demoted) bytes demoted)"
echo PASS
