/* ember-callbench --launch (launch.c): the launch hook's cost on the simulated driver. */
#ifndef EMBER_BENCH_LAUNCH_H
#define EMBER_BENCH_LAUNCH_H

/* Time launches through sim directly and through shim (EMBER_MODE as set); JSON records on stdout. */
int launch_bench(const char *sim, const char *shim, const char *label);

/* name in the library h, or the program ends with one line saying which is missing (callbench.c). */
void *bench_symbol(void *h, const char *name);

#endif
