/*
 * Ember's locks, and the one order they are taken in: a thread that holds
 * one may take only those listed after it. fork() takes them all in this
 * order and releases them in both processes, so a child never inherits a
 * lock some other thread of the parent held. No lock is held while calling
 * the driver (the driver's own fork handlers run before these and take its
 * locks first), except the loader lock around dlopen, which is why the
 * loader comes last.
 */
#ifndef EMBER_LOCKS_H
#define EMBER_LOCKS_H

#include <pthread.h>

extern pthread_mutex_t ember_lock_worker;   /* mech/worker.c: the migration queue */
extern pthread_mutex_t ember_lock_uvm;      /* signal/uvm_events.c: the UVM event queue and its counts */
/*                     ember_shim_table.lock   policy/regions.h: the region table and the accounts */
extern pthread_mutex_t ember_lock_layouts;  /* signal/kernels.c: kernel layouts and what launches taught */
extern pthread_mutex_t ember_lock_graphs;   /* abi/hooks_graph.c: scans kept for graph launches */
extern pthread_mutex_t ember_lock_physical; /* mech/physical.c, pools.c, pool_usage.c, kept.c: handles, pools, kept */
extern pthread_mutex_t ember_lock_mappings; /* mech/vmm_mappings.c: mappings of cuMemCreate memory Ember answers for */
extern pthread_mutex_t ember_lock_streams;  /* mech/streams.c: private streams */
extern pthread_mutex_t ember_lock_said;     /* abi/hooks_memory.c: entry points already logged */
extern pthread_mutex_t ember_lock_busy;     /* signal/gpu_busy.c: the streams that may still run */
extern pthread_mutex_t ember_lock_trace;    /* report/tracer.c: the trace buffer */
extern pthread_mutex_t ember_lock_loader;   /* abi/loader.c: opening the driver */

/*
 * Take and release Ember's locks through these. A build with
 * EMBER_LOCK_CHECK (Debug, and the sanitizer builds CI runs) keeps each
 * thread's held locks and aborts with one line naming both locks when a
 * thread takes a lock while holding one listed after it: the order above
 * is checked, not only written down. Condition waits keep a lock held.
 */
#ifdef EMBER_LOCK_CHECK
void ember_lock(pthread_mutex_t *m);
void ember_unlock(pthread_mutex_t *m);
#else
static inline void ember_lock(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
}
static inline void ember_unlock(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
}
#endif

/* Install the fork handlers (library constructor). */
void ember_locks_at_fork(void (*child)(void));

#endif
