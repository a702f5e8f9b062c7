/* ember-callbench --launch (launch.c): the launch hook's cost on the simulated driver. */
#ifndef EMBER_BENCH_LAUNCH_H
#define EMBER_BENCH_LAUNCH_H

#include <cuda.h>

/* Time launches through sim directly and through shim (EMBER_MODE as set); JSON records on stdout. */
int launch_bench(const char *sim, const char *shim, const char *label);

/* Time cuGraphLaunch of a llama.cpp-shaped graph through sim directly and through shim (graph_launch.c). */
int graph_bench(const char *sim, const char *shim, const char *label);

/* Shared by the benchmarks: a monotonic clock in ns, a qsort order for doubles, and a driver call that must succeed. */
double bench_now_ns(void);
int bench_cmp_double(const void *a, const void *b);
void bench_check(CUresult r, const char *what);

/* name in the library h, or the program ends with one line saying which is missing (callbench.c). */
void *bench_symbol(void *h, const char *name);

/* A typed pointer to `name` in a library. */
#define SYM_CALL(h, name) ((__typeof__(&name))bench_symbol((h), #name))

/* Make path, as an absolute path, the driver the shim forwards to (EMBER_REAL_LIBCUDA takes no other), or end saying why. */
void bench_real_driver(const char *path);

/* The library at path, or the program ends saying why (launch.c). */
void *bench_open(const char *path);

/* Through shim: the first GPU's primary context made current, and the simulated driver's module (launch.c). */
CUmodule bench_sim_module(void *shim);

/* A simulated kernel that reads nothing: what the benchmarks time is the host's side of its launch. */
struct ember_sim_launch;
void bench_idle_kernel(const struct ember_sim_launch *launch, void **params);

#endif
