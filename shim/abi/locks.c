/* The locks in their order, and fork(). */
#include "locks.h"
#include "state.h"

pthread_mutex_t ember_lock_worker = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_uvm = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_layouts = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_graphs = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_physical = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_mappings = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_streams = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_said = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_busy = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_trace = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_loader = PTHREAD_MUTEX_INITIALIZER;

static pthread_mutex_t *const order[] = {
	&ember_lock_worker, &ember_lock_uvm,	  &ember_shim_table.lock, &ember_lock_layouts,
	&ember_lock_graphs, &ember_lock_physical, &ember_lock_mappings,	  &ember_lock_streams,
	&ember_lock_said,   &ember_lock_busy,	  &ember_lock_trace,	  &ember_lock_loader,
};
enum { NLOCKS = sizeof order / sizeof order[0] };

#ifdef EMBER_LOCK_CHECK
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const names[NLOCKS] = {
	"worker", "uvm", "table", "layouts", "graphs", "physical", "mappings", "streams", "said", "busy", "trace", "loader",
};
static __thread uint32_t held; /* bit per rank in order[] */

/* Called for every Ember lock taken or released; the region table's too (policy/regions.c). */
void ember_lock_note(pthread_mutex_t *m, bool taking)
{
	int r = 0;
	while (r < NLOCKS && order[r] != m)
		r++;
	if (r == NLOCKS)
		return; /* not one of the shim's (ember-sim's own tables) */
	if (!taking) {
		held &= ~(1u << r);
		return;
	}
	if (held >> r) {
		int h = 31 - __builtin_clz(held);
		fprintf(stderr, "ember: lock order broken: taking the %s lock while holding the %s lock (shim/abi/locks.h)\n",
			names[r], names[h]);
		abort();
	}
	held |= 1u << r;
}

void ember_lock(pthread_mutex_t *m)
{
	ember_lock_note(m, true);
	pthread_mutex_lock(m);
}

void ember_unlock(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
	ember_lock_note(m, false);
}
#endif

static void (*child_hook)(void);

static void before_fork(void)
{
	for (int i = 0; i < NLOCKS; i++)
		pthread_mutex_lock(order[i]);
}

static void after_fork_parent(void)
{
	for (int i = NLOCKS; i-- > 0;)
		pthread_mutex_unlock(order[i]);
}

/* The child has one thread, ours: each lock is made anew (a held mutex may not be unlocked by a copy). */
static void after_fork_child(void)
{
	for (int i = 0; i < NLOCKS; i++)
		pthread_mutex_init(order[i], NULL);
	if (child_hook)
		child_hook();
}

void ember_locks_at_fork(void (*child)(void))
{
	child_hook = child;
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}
