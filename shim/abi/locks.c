/* The locks in their order, and fork(). */
#include "locks.h"
#include "state.h"

pthread_mutex_t ember_lock_worker = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_uvm = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_layouts = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_graphs = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_physical = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_streams = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_said = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_trace = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ember_lock_loader = PTHREAD_MUTEX_INITIALIZER;

static pthread_mutex_t *const order[] = {
	&ember_lock_worker, &ember_lock_uvm,	  &ember_shim_table.lock, &ember_lock_layouts, &ember_lock_graphs,
	&ember_lock_physical, &ember_lock_streams, &ember_lock_said,	     &ember_lock_trace, &ember_lock_loader,
};
enum { NLOCKS = sizeof order / sizeof order[0] };

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
