/* Read-mostly advice for resident memory that kernels only read (read_dup.h). */
#include <stdint.h>
#include <stdlib.h>

#include "capture.h"
#include "read_dup.h"
#include "shim.h"
#include "state.h"

static struct ember_read_dup_counts counts; /* atomic */
bool ember_read_dup_watching;

/* Advice on [start, start + bytes) of a's GPU; a failure leaves the advice as it was, with one debug line. */
static void advise(const struct ember_alloc *a, CUdeviceptr start, size_t bytes, CUmem_advise advice)
{
	CUmemLocation gpu = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = a->device };
	CUresult r = EMBER_REAL(cuMemAdvise_v2)(start, bytes, advice, gpu);
	if (r == CUDA_SUCCESS)
		__atomic_add_fetch(advice == CU_MEM_ADVISE_SET_READ_MOSTLY ? &counts.bytes_advised : &counts.bytes_withdrawn,
				   bytes, __ATOMIC_RELAXED);
	static bool said;
	if (r != CUDA_SUCCESS && ember_first_time(&said))
		ember_debug("read-mostly advice %s failed (CUresult %d): the range keeps the advice it had",
			    advice == CU_MEM_ADVISE_SET_READ_MOSTLY ? "given" : "withdrawn", (int)r);
}

/* Raise a's access to at least `to`; whether it was below. Most launches find it there: a plain load. */
static bool rise(struct ember_alloc *a, uint8_t to)
{
	uint8_t was = __atomic_load_n(&a->gpu_access, __ATOMIC_RELAXED);
	while (was < to)
		if (__atomic_compare_exchange_n(&a->gpu_access, &was, to, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			return true;
	return false;
}

/*
 * Withdraw the advice from all of a but the regions the application
 * advised or prefetched itself: read-mostly advice there may be its own.
 * The runs are found under the table lock and advised after it.
 */
static void withdraw_all(struct ember_alloc *a)
{
	if (!__atomic_load_n(&a->app_advised, __ATOMIC_SEQ_CST)) {
		advise(a, a->base, a->size, CU_MEM_ADVISE_UNSET_READ_MOSTLY);
		return;
	}
	uint32_t *runs = malloc(sizeof *runs * 2 * (a->nregions / 2 + 1)), n = 0;
	if (!runs)
		return; /* the advice stays: a write to a duplicated page costs a collapse, nothing more */
	ember_table_lock(EMBER_TABLE);
	for (uint32_t r = 0; r < a->nregions;) {
		if (a->regions[r].hinted) {
			r++;
			continue;
		}
		uint32_t end = r;
		while (end < a->nregions && !a->regions[end].hinted)
			end++;
		runs[n++] = r;
		runs[n++] = end;
		r = end;
	}
	ember_table_unlock(EMBER_TABLE);
	for (uint32_t i = 0; i < n; i += 2)
		advise(a, a->base + ((uint64_t)runs[i] << EMBER_REGION_SHIFT),
		       ember_span_bytes(a, runs[i], runs[i + 1] - runs[i]), CU_MEM_ADVISE_UNSET_READ_MOSTLY);
	free(runs);
}

/* a is written (`by` says how): the advice it has, if any, is withdrawn from all of it, once. */
static void withdraw_written(struct ember_alloc *a, const char *by)
{
	if (!__atomic_exchange_n(&a->read_dup, false, __ATOMIC_SEQ_CST))
		return; /* never advised, or withdrawn already */
	__atomic_add_fetch(&counts.written, 1, __ATOMIC_RELAXED);
	ember_debug("allocation %llu: %s; its read-mostly advice is withdrawn", (unsigned long long)a->id, by);
	withdraw_all(a);
}

void ember_read_dup_launch(const struct ember_scan *s)
{
	if (!ember_cfg.read_mostly || !s->f)
		return; /* off: nothing reads the tracking; a graph's merged scan (hooks_graph.c): its kernels' own say */
	for (unsigned i = 0; i < s->nptrs; i++) {
		struct ember_alloc *a = s->ptrs[i].alloc;
		unsigned param = s->ptrs[i].param;
		bool reads = param < EMBER_SCAN_LEARNED && (s->declared.read_only >> param & 1u);
		bool rose = rise(a, reads ? EMBER_GPU_READS : EMBER_GPU_WRITES);
		if (reads) {
			if (rose)
				__atomic_store_n(&ember_read_dup_watching, true, __ATOMIC_RELAXED);
			continue;
		}
		/* written before, by a copy during a capture (ember_read_dup_copy_into), with the advice left on */
		if (!rose && !__atomic_load_n(&a->read_dup, __ATOMIC_RELAXED))
			continue;
		/* its first write: a duplicated page would collapse at each of the kernel's first writes to it */
		withdraw_written(a, "a launch may write it");
	}
}

/* The allocations a copy writes that launches have only read so far, each with a reference. */
enum { COPY_ALLOCS_AT_MOST = 8 };
struct copied {
	struct ember_alloc *v[COPY_ALLOCS_AT_MOST];
	unsigned n;
};

static void note_copied(struct ember_alloc *a, uint32_t r0, uint32_t r1, void *arg)
{
	struct copied *c = arg;
	if (c->n < COPY_ALLOCS_AT_MOST && (__atomic_load_n(&a->gpu_access, __ATOMIC_SEQ_CST) == EMBER_GPU_READS ||
					   __atomic_load_n(&a->read_dup, __ATOMIC_SEQ_CST))) {
		a->refs++;
		c->v[c->n++] = a;
	}
}

void ember_read_dup_copy_into(CUdeviceptr dst, size_t bytes)
{
	if (bytes == 0)
		return;
	if (dst + bytes < dst)
		bytes = UINT64_MAX - dst; /* a size no copy could have: up to the end, not past it */
	struct copied c = { .n = 0 };
	ember_table_lock(EMBER_TABLE);
	ember_table_for_each_overlap(EMBER_TABLE, dst, bytes, note_copied, &c);
	ember_table_unlock(EMBER_TABLE);
	/*
	 * A copy captured into a graph (hooks_capture.c) is written down
	 * now, and the advice withdrawn when the graph is instantiated, from
	 * its copy nodes (copies.h): an advice call made during a capture
	 * might invalidate it.
	 */
	bool capturing = ember_capture_under_way();
	for (unsigned i = 0; i < c.n; i++) {
		struct ember_alloc *a = c.v[i];
		rise(a, EMBER_GPU_WRITES); /* read but never advised: it never will be now */
		if (!capturing)
			withdraw_written(a, "a copy or memset writes it");
	}
	ember_allocs_put(EMBER_TABLE, c.v, c.n);
}

void ember_read_dup_arrived(struct ember_alloc *a, CUdeviceptr start, size_t bytes)
{
	if (!ember_cfg.read_mostly || __atomic_load_n(&a->gpu_access, __ATOMIC_SEQ_CST) != EMBER_GPU_READS ||
	    __atomic_load_n(&a->app_advised, __ATOMIC_SEQ_CST))
		return; /* written, or placed by the application in part: its advice is its own */
	/*
	 * Marked before the advice and checked after it: a launch that writes
	 * a meanwhile either finds the mark and withdraws the advice from all
	 * of a, or is seen here and this range's is withdrawn.
	 */
	if (!__atomic_exchange_n(&a->read_dup, true, __ATOMIC_SEQ_CST))
		ember_debug("allocation %llu (%llu MiB): every launch reads it through pointers to const; its resident "
			    "ranges get read-mostly advice",
			    (unsigned long long)a->id, (unsigned long long)(a->size >> 20));
	advise(a, start, bytes, CU_MEM_ADVISE_SET_READ_MOSTLY);
	if (__atomic_load_n(&a->gpu_access, __ATOMIC_SEQ_CST) != EMBER_GPU_READS)
		advise(a, start, bytes, CU_MEM_ADVISE_UNSET_READ_MOSTLY);
}

void ember_read_dup_leaving(struct ember_alloc *a, CUdeviceptr start, size_t bytes)
{
	if (__atomic_load_n(&a->read_dup, __ATOMIC_SEQ_CST))
		advise(a, start, bytes, CU_MEM_ADVISE_UNSET_READ_MOSTLY);
}

void ember_read_dup_counts(struct ember_read_dup_counts *out)
{
	out->bytes_advised = __atomic_load_n(&counts.bytes_advised, __ATOMIC_RELAXED);
	out->bytes_withdrawn = __atomic_load_n(&counts.bytes_withdrawn, __ATOMIC_RELAXED);
	out->written = __atomic_load_n(&counts.written, __ATOMIC_RELAXED);
}
