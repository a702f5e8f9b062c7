/*
 * Converted stream-ordered allocations that the program freed
 * (cuMemFreeAsync), kept for its next allocation of the same size, as the
 * driver's pool keeps its memory (EMBER_KEEP_FREED). A framework that
 * allocates each op's output through the driver (PyTorch's
 * backend:cudaMallocAsync, JAX's cuda_async) otherwise pays a managed
 * allocation, its advice and its population per op: 65-90 us more than
 * the driver's pool on an H100 (docs/findings.md, session 53). A kept
 * allocation stays in Ember's table, placed as it was. As the driver's
 * pool, a pool keeps what passes its release threshold only until the
 * program's next synchronisation. This is the container alone;
 * hooks_stream_ordered.c makes the driver calls.
 */
#ifndef EMBER_KEPT_H
#define EMBER_KEPT_H

#include <cuda.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ember_kept {
	CUdeviceptr base;
	uint64_t size;
	CUcontext ctx;
	CUmemoryPool pool; /* the pool it was allocated from, which alone may give it again */
	CUstream stream; /* the stream it was freed on, as a key (ember_kept_stream); NULL once destroyed */
	uint64_t thread; /* the freeing thread where that is its per-thread default stream, else 0 */
	CUevent freed;   /* recorded on that stream at the free */
};

/* Whether EMBER_KEEP_FREED keeps anything: off, nothing is ever kept, and no call here need be made. */
bool ember_keeping(void);

/* The key of a stream as kept entries name it: the legacy and per-thread defaults told apart, the latter per thread. */
void ember_kept_stream(CUstream stream, bool ptsz, CUstream *key, uint64_t *thread);

/* Keep e (newest last); false when no memory was left to keep it in. */
bool ember_kept_put(const struct ember_kept *e);

/* While more than cap bytes are kept (each entry counted as at least 64 KiB): the oldest entry, taken out, in out. */
bool ember_kept_trim(uint64_t cap, struct ember_kept *out);

/*
 * An entry of size bytes from pool in ctx, taken out, in out: the newest
 * freed on the same stream, which that stream may use at once (*same set),
 * else the oldest freed on another, which may be used once its event has
 * completed (the caller puts it back, as the newest, if not).
 */
bool ember_kept_take(uint64_t size, CUcontext ctx, CUmemoryPool pool, CUstream stream, uint64_t thread,
		     struct ember_kept *out, bool *same);

/* The entry at base, taken out (the program freed it again), in out. */
bool ember_kept_forget(CUdeviceptr base, struct ember_kept *out);

/* An entry of ctx, taken out, in out: at its teardown, until none is left. */
bool ember_kept_of_context(CUcontext ctx, struct ember_kept *out);

/*
 * Pool's oldest entries, taken out into out (at most max), until no more
 * than keep bytes of pool's are kept; how many. The program trims the pool
 * (cuMemPoolTrimTo: PyTorch's empty_cache), destroys it (keep 0), or
 * synchronises past its release threshold. A batch a walk: letting go of
 * thousands of tiny entries walks the list a few times, not once each.
 */
size_t ember_kept_of_pool(CUmemoryPool pool, uint64_t keep, struct ember_kept *out, size_t max);

/*
 * The child of fork: the parent's kept memory is not the child's to give
 * (the driver refuses a CUDA parent's child its calls), so the list starts
 * empty; the entries' events leak, with the parent's table.
 */
void ember_kept_after_fork_child(void);

/* The stream was destroyed: its entries may be used by another stream once their events complete. */
void ember_kept_stream_gone(CUstream stream);

/* An allocation was given kept memory. */
void ember_kept_reused(void);

/*
 * The pool that kept entries came from with the smallest handle past
 * *after (after NULL: the smallest of all), in next: walked so, every pool
 * is visited once however many there are, while entries come and go.
 */
bool ember_kept_next_pool(const CUmemoryPool *after, CUmemoryPool *next);

/* Kept memory of size bytes was let go because the program trimmed or destroyed its pool. */
void ember_kept_trimmed(uint64_t size);

/*
 * How many allocations were given kept memory, how many bytes are kept now,
 * and how many its pools' trims let go: read without the lock, so each may
 * lag a change under way.
 */
uint64_t ember_kept_reuses(void);
uint64_t ember_kept_bytes(void);
uint64_t ember_kept_trimmed_bytes(void);

#endif
