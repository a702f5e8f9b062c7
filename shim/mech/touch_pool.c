/*
 * EMBER_POPULATE_ASYNC: the host's touches of converted memory past the
 * budget made by a pool of threads while the program goes on, instead of
 * before the allocation returns. Building a model past the budget waits
 * in each allocation for its touches (9.4 GiB at 10-13 GB/s for a 26 GB
 * model), though its kernels could have been drawing the weights already
 * made, and its Python building the next layer.
 *
 * The program has the address by then, so a touch must not change what
 * the page holds: it adds zero atomically, which makes the page as a write
 * does and keeps whatever a kernel wrote first. A touch takes one mapped
 * region at a time, checked under the table lock: a region that a move has
 * taken, or an allocation being freed, is passed over, and the move or the
 * free waits for the touches under way (ember_touch_pool_settle).
 *
 * On an H100 (ab-46's call 3, three processes each in turn) building and
 * drawing hf-llama 13b past a 16 GiB budget took 1.26-1.33 s with the pool
 * against 1.52-1.79 with the touches before each allocation returned, and
 * a Mixtral-shaped 25 GB model 1.09-1.23 against 1.30-1.41; loading a
 * checkpoint took as long either way (call 5).
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "locks.h"
#include "shim.h"
#include "state.h"
#include "host_touch.h"
#include "touch_pool.h"
#include "touch_threads.h"

struct job {
	struct job *next;
	struct ember_alloc *a; /* a reference, given back when the job ends */
	uint32_t next_region;  /* the next region to look at */
};

/* All under the table lock. */
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER; /* a job queued, or the pool stopping */
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER; /* a touch ended */
static struct job *head, **tail = &head;
static pthread_t threads[EMBER_TOUCH_MAX_THREADS];
static unsigned nthreads;
static unsigned touching; /* regions being touched now, all allocations */
static bool stopping, exit_hooked;

#define TABLE (&EMBER_TABLE->lock)

/* The first mapped region of j's allocation from its next one on; nregions when none is left. */
static uint32_t next_mapped(const struct job *j)
{
	const struct ember_alloc *a = j->a;
	if (a->freed)
		return a->nregions;
	uint32_t r = j->next_region;
	while (r < a->nregions && a->regions[r].state != EMBER_REGION_MAPPED)
		r++;
	return r;
}

/* Make region r's pages without changing them. */
static void touch_region(const struct ember_alloc *a, uint32_t r, size_t page)
{
	uint64_t bytes = ember_span_bytes(a, r, 1);
	char *p = (char *)(uintptr_t)(a->base + ((uint64_t)r << EMBER_REGION_SHIFT));
	for (uint64_t b = 0; b < bytes; b += page)
		__atomic_fetch_or((uint64_t *)(p + b), 0, __ATOMIC_RELAXED);
}

static void *toucher(void *arg)
{
	size_t page = (size_t)(uintptr_t)arg;
	ember_table_lock(EMBER_TABLE);
	for (;;) {
		while (!stopping && !head)
			pthread_cond_wait(&wake, TABLE);
		if (stopping)
			break;
		struct job *j = head;
		uint32_t r = next_mapped(j);
		if (r >= j->a->nregions) {
			/* done with it: the job leaves the queue, its reference after the lock */
			head = j->next;
			if (!head)
				tail = &head;
			ember_table_unlock(EMBER_TABLE);
			ember_alloc_put(EMBER_TABLE, j->a);
			free(j);
			ember_table_lock(EMBER_TABLE);
			continue;
		}
		j->next_region = r + 1;
		struct ember_alloc *a = j->a;
		a->host_touching++;
		touching++;
		ember_table_unlock(EMBER_TABLE);
		touch_region(a, r, page);
		ember_host_touch_counted(a, ember_span_bytes(a, r, 1));
		ember_table_lock(EMBER_TABLE);
		a->host_touching--;
		touching--;
		pthread_cond_broadcast(&idle);
	}
	ember_table_unlock(EMBER_TABLE);
	return NULL;
}

static void stop_at_exit(void)
{
	ember_table_lock(EMBER_TABLE);
	stopping = true;
	unsigned n = nthreads;
	pthread_cond_broadcast(&wake);
	ember_table_unlock(EMBER_TABLE);
	for (unsigned i = 0; i < n; i++)
		pthread_join(threads[i], NULL); /* each ends its region first: a millisecond or so */
}

/* Start the threads wanted (table lock held); whether any runs. */
static bool ensure_threads(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned want = ember_touch_pool_threads(cpus);
	long page = sysconf(_SC_PAGESIZE);
	void *arg = (void *)(uintptr_t)(page > 0 ? page : 4096);
	while (!stopping && nthreads < want && pthread_create(&threads[nthreads], NULL, toucher, arg) == 0)
		nthreads++;
	if (nthreads && !exit_hooked) {
		exit_hooked = true;
		atexit(stop_at_exit);
		ember_info("EMBER_POPULATE_ASYNC: %u threads make converted memory past the budget in the background",
			   nthreads);
	}
	return nthreads > 0 && !stopping;
}

bool ember_touch_pool_add(struct ember_alloc *a)
{
	struct job *j = calloc(1, sizeof *j);
	if (!j)
		return false;
	ember_table_lock(EMBER_TABLE);
	bool running = !a->freed && ensure_threads();
	if (running) {
		a->refs++;
		j->a = a;
		*tail = j;
		tail = &j->next;
		pthread_cond_broadcast(&wake);
	}
	ember_table_unlock(EMBER_TABLE);
	if (!running)
		free(j);
	return running;
}

void ember_touch_pool_settle(struct ember_alloc *a)
{
	ember_table_lock(EMBER_TABLE);
	while (a->host_touching && nthreads) /* none in a forked child, whatever the parent's were doing */
		pthread_cond_wait(&idle, TABLE);
	ember_table_unlock(EMBER_TABLE);
}

void ember_touch_pool_drain(void)
{
	ember_table_lock(EMBER_TABLE);
	struct job *gone = head;
	head = NULL;
	tail = &head;
	while (touching && nthreads)
		pthread_cond_wait(&idle, TABLE);
	ember_table_unlock(EMBER_TABLE);
	while (gone) {
		struct job *j = gone;
		gone = j->next;
		ember_alloc_put(EMBER_TABLE, j->a);
		free(j);
	}
}

void ember_touch_pool_after_fork_child(void)
{
	/* the parent's threads are not the child's, nor are its jobs (their references leak, with the parent's table) */
	pthread_cond_init(&wake, NULL);
	pthread_cond_init(&idle, NULL);
	head = NULL;
	tail = &head;
	nthreads = touching = 0;
	stopping = false;
}
