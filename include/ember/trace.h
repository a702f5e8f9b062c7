/*
 * EMBER_TRACE: the record of a run that ember-sim replays.
 *
 * A trace is text, one event per line, fields separated by one space, all
 * numbers decimal. Times are nanoseconds since the trace began (the shim's
 * monotonic clock). The first line is the header; a reader rejects a file
 * whose header it does not know (version 1 is read too: its L lines have
 * no <kernel> and no <arg>), and skips (and counts) lines it cannot
 * parse rather than stopping, so a trace cut short by a crash still replays.
 *
 *   ember-trace 1
 *   D <dev> <budget_bytes> <high_bytes> <low_bytes>      a GPU's budget became known
 *   A <t> <id> <dev> <size> <kind>                       allocation; kind: m managed, c converted
 *   P <t> <dev> <size>                                   plain device memory allocated (negative size: freed)
 *   F <t> <id>                                           allocation freed
 *   L <t> <stream> <kernel> <n> <id>:<offset>:<bytes>[:<arg>] ...
 *                                                        launch: the n ranges it references, one per pointer
 *                                                        as the scan saw them (n 0 and none: it named no
 *                                                        placed memory); they may overlap (a kernel
 *                                                        can pass one pointer in several arguments), and
 *                                                        what the launch reads is their union. <kernel>
 *                                                        numbers the kernel in order of first sight ('-':
 *                                                        unknown); <arg>, the argument the pointer was,
 *                                                        is there when launch order follows it (it was its
 *                                                        argument's only pointer): a replay compares it
 *                                                        with the same kernel's same argument on the stream
 *   M <t> <id> <first> <count> <P|D> <ok> <ns>           a move completed: regions [first, first+count),
 *                                                        P promotion or D demotion, ok 1/0, driver time ns
 *   H <t> <id> <offset> <bytes>                          the application's own advice or prefetch
 *   W <t> <t_end>                                        the host waited for the GPU from t to t_end: a
 *                                                        synchronisation, a blocking copy, or a launch
 *                                                        that found the launch queue full (over 50 us)
 *   Q <t> <phase> <seen>                                 a host phase (the program waited for the GPU, then
 *                                                        took page faults on the host): <phase> counts them,
 *                                                        from 1; <seen> 1 when Ember saw it while it lasted
 *                                                        with no stream the program launched on left
 *                                                        running (the worker, which then ended the episode
 *                                                        of launches before it: shim/policy/policy.h,
 *                                                        shim/signal/gpu_busy.h), 0 when the launch after
 *                                                        it did; a replay ends the episode where it is 1
 *   X <t>                                                the application called ember_flush(): programs
 *                                                        that time a phase flush first, so a replay can
 *                                                        time from the last X that a launch follows to
 *                                                        the end as they did (a flush on the way out
 *                                                        starts no phase)
 *   E <t>                                                end of the run
 *
 * <id> is the allocation's order of creation in the process, from 0;
 * offsets and sizes are bytes; <stream> is an opaque key that is equal for
 * launches on the same stream. Lines starting with '#' are comments.
 */
#ifndef EMBER_TRACE_H
#define EMBER_TRACE_H

#define EMBER_TRACE_MAGIC "ember-trace"
#define EMBER_TRACE_VERSION 2

#endif
