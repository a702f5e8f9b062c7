/*
 * Ember's public interface for programs that want to talk to it. Everything
 * here is optional: an unmodified CUDA program needs none of it. Look the
 * functions up with dlsym(RTLD_DEFAULT, ...) to stay runnable without Ember.
 */
#ifndef EMBER_EMBER_H
#define EMBER_EMBER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "0.1.0"; its presence also tells a loader that a library is Ember. */
const char *ember_version(void);

/* The path of the real driver Ember forwards to, or "" if none was found. */
const char *ember_real_driver(void);

/* 1 when Ember rewrites calls, 0 when it is a pure pass-through. */
int ember_is_active(void);

/*
 * Wait until every migration Ember has started has completed. Returns 0.
 * Programs never need it: data is correct at all times. Benchmarks and
 * tests use it to measure a settled placement.
 */
int ember_flush(void);

/*
 * Hints. Promote moves Ember-placed memory in [ptr, ptr + bytes) to the GPU
 * as far as the budget allows; evict moves its resident part back to host
 * memory, where it stays mapped. Both start the moves and return the bytes
 * scheduled, or -1 when Ember is not placing memory (EMBER_MODE off or
 * mapped). Neither changes any byte the program sees.
 */
long long ember_promote(const void *ptr, size_t bytes);
long long ember_evict(const void *ptr, size_t bytes);

/* What Ember knows of the 2 MiB region holding an address. */
struct ember_region_info {
	int state;             /* 0 mapped, 1 promoting, 2 resident, 3 demoting */
	int device;            /* the GPU whose budget it counts against */
	int app_hinted;        /* the application's advice or prefetch covers it */
	unsigned demand;       /* adaptive: decayed demand, as of its last update */
	float score;           /* adaptive: migration score */
	unsigned long long grace_ns; /* adaptive: protection left */
};

/* Fill *out for ptr. Returns 0, or -1 when Ember does not place that address. */
int ember_region_info(const void *ptr, struct ember_region_info *out);

#ifdef __cplusplus
}
#endif

#endif
