/*
 * The host populates never-touched mapped memory faster than the GPU's
 * first writes do. On the H200 (ember-promote-probe, 4 GiB): a kernel's
 * first writes faulted it in at about 4 GB/s, and a prefetch to the host
 * populated it no faster, from one stream or eight; the host's own touches
 * from eight threads took 0.38 s (11.4 GB/s), after which a kernel wrote
 * it at 46 GB/s. Loading a model past the budget under EMBER_MANAGE_ALL
 * writes every weight there first.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "grow.h"
#include "host_memory.h"
#include "host_touch.h"
#include "shim.h"
#include "state.h"
#include "touch_pool.h"
#include "touch_threads.h"

struct run {
	char *start;
	uint64_t bytes;
};

struct work {
	const struct run *runs;
	size_t nruns;
	uint64_t next;  /* the next chunk's offset into the runs laid end to end (atomic) */
	uint64_t total;
	size_t page;
};

/* Touch [off, off + len) of the runs laid end to end. */
static void touch_span(const struct work *w, uint64_t off, uint64_t len)
{
	for (size_t i = 0; i < w->nruns && len; i++) {
		if (off >= w->runs[i].bytes) {
			off -= w->runs[i].bytes;
			continue;
		}
		uint64_t n = w->runs[i].bytes - off < len ? w->runs[i].bytes - off : len;
		volatile char *p = w->runs[i].start + off;
		for (uint64_t b = 0; b < n; b += w->page)
			p[b] = 0;
		len -= n;
		off = 0;
	}
}

static void *toucher(void *arg)
{
	struct work *w = arg;
	for (;;) {
		uint64_t off = __atomic_fetch_add(&w->next, EMBER_TOUCH_CHUNK_BYTES, __ATOMIC_RELAXED);
		if (off >= w->total)
			return NULL;
		touch_span(w, off, w->total - off < EMBER_TOUCH_CHUNK_BYTES ? w->total - off : EMBER_TOUCH_CHUNK_BYTES);
	}
}

/*
 * The pages the touches make stay made, where the driver would make only
 * those the program writes (a KV cache sized for the longest context, a
 * workspace used in part). So the touches take no more than half of what
 * the host, or the process's cgroup, could give at the first of them, in
 * all, nor half of what it can give now (host_memory.h), and they share
 * that with cuMemCreate memory made in host memory, which is page-locked
 * (physical.c); a free gives its allocation's back. Past that the driver
 * makes the pages, as with EMBER_POPULATE_HOST=0. Guarded by the table
 * lock.
 */
static struct ember_host_allowance allowance;

bool ember_host_claim(uint64_t bytes)
{
	uint64_t now = ember_host_memory_available_now();
	ember_table_lock(EMBER_TABLE);
	bool ok = ember_host_allowance_take(&allowance, bytes, now);
	ember_table_unlock(EMBER_TABLE);
	return ok;
}

void ember_host_unclaim(uint64_t bytes)
{
	ember_table_lock(EMBER_TABLE);
	ember_host_allowance_give(&allowance, bytes);
	ember_table_unlock(EMBER_TABLE);
}

/* Take bytes of the allowance for a, given back whole at its free (whatever the pool finds left to touch). */
static bool within_allowance(struct ember_alloc *a, uint64_t bytes)
{
	if (!ember_host_claim(bytes))
		return false;
	ember_table_lock(EMBER_TABLE);
	a->host_allowed = bytes;
	ember_table_unlock(EMBER_TABLE);
	return true;
}

void ember_host_touch_counted(struct ember_alloc *a, uint64_t bytes)
{
	ember_table_lock(EMBER_TABLE);
	a->stats.bytes_populated += bytes;
	struct ember_device_account *acc = ember_table_account(EMBER_TABLE, a->device);
	if (acc)
		acc->bytes_populated += bytes;
	ember_table_unlock(EMBER_TABLE);
}

void ember_host_touch_freed(const struct ember_alloc *a)
{
	ember_table_lock(EMBER_TABLE);
	uint64_t allowed = a->host_allowed;
	ember_table_unlock(EMBER_TABLE);
	ember_host_unclaim(allowed);
}

uint64_t ember_host_touch_mapped(struct ember_alloc *a)
{
	struct run *runs = NULL;
	size_t nruns = 0, cap = 0;
	uint64_t total = 0;
	ember_table_lock(EMBER_TABLE);
	const struct ember_device_account *acc = ember_table_account(EMBER_TABLE, a->device);
	/*
	 * An allocation larger than its GPU's budget is a pool, not data about
	 * to be written: JAX preallocates 75% of the GPU (105 GB on the H200),
	 * and touching what the budget leaves of it would make that much host
	 * memory at once. The driver makes its pages as they are first used.
	 */
	uint32_t nregions = acc && acc->budget && a->size > acc->budget ? 0 : a->nregions;
	for (uint32_t r = 0; r < nregions;) {
		uint32_t end = ember_run_end(a, r, EMBER_REGION_MAPPED);
		if (end == r) {
			r++;
			continue;
		}
		if (!ember_grow(&runs, nruns, &cap, sizeof *runs, 8))
			break;
		uint64_t bytes = ember_span_bytes(a, r, end - r);
		runs[nruns++] = (struct run){ (char *)(uintptr_t)(a->base + ((uint64_t)r << EMBER_REGION_SHIFT)), bytes };
		total += bytes;
		r = end;
	}
	ember_table_unlock(EMBER_TABLE);
	if (total && !within_allowance(a, total)) {
		static bool said;
		if (ember_first_time(&said))
			ember_info("EMBER_POPULATE_HOST: %.2f GiB of an allocation past the budget left to the driver: the "
				   "touches take at most half of what the host could give",
				   total / 1073741824.0);
		total = 0;
	}
	/*
	 * The pool's touches, which count what they make, when asked for and
	 * it runs; else this thread's and its helpers' before returning.
	 */
	if (total && !(ember_cfg.populate_async && ember_touch_pool_add(a))) {
		long page = sysconf(_SC_PAGESIZE);
		struct work w = { runs, nruns, 0, total, page > 0 ? (size_t)page : 4096 };
		pthread_t helpers[EMBER_TOUCH_MAX_THREADS];
		unsigned started = 0, want = ember_touch_threads(total, sysconf(_SC_NPROCESSORS_ONLN));
		while (started + 1 < want && pthread_create(&helpers[started], NULL, toucher, &w) == 0)
			started++;
		toucher(&w); /* the calling thread too, and alone when no helper started */
		for (unsigned i = 0; i < started; i++)
			pthread_join(helpers[i], NULL);
		ember_host_touch_counted(a, total);
	}
	free(runs);
	return total;
}
