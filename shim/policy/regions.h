/*
 * The region table: every managed allocation Ember places, split into 2 MiB
 * regions (the driver's VA block), each mapped, resident or in flight.
 *
 * Allocations sit in an array sorted by base address, so any interior
 * address is found by binary search, O(log n), under a reader lock. An
 * allocation is reference-counted: cuMemFree removes it from the table at
 * once, so no new work can find it, but its memory is handed back to the
 * driver only after every migration in flight on it has completed.
 *
 * Nothing here calls the driver; callers do, without holding the table lock.
 */
#ifndef EMBER_REGIONS_H
#define EMBER_REGIONS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "budget.h"

#define EMBER_REGION_SHIFT 21
#define EMBER_REGION_BYTES ((uint64_t)1 << EMBER_REGION_SHIFT)

enum ember_region_state {
	EMBER_REGION_MAPPED,    /* host memory, mapped into the GPU */
	EMBER_REGION_PROMOTING, /* a prefetch to the GPU is in flight */
	EMBER_REGION_RESIDENT,  /* in GPU memory */
	EMBER_REGION_DEMOTING,  /* a prefetch back to the host is in flight */
};

/* Where an allocation came from, and so how Ember may treat it. */
enum ember_alloc_kind {
	EMBER_ALLOC_MANAGED,   /* the application's cuMemAllocManaged */
	EMBER_ALLOC_CONVERTED, /* a plain allocation turned managed (EMBER_MANAGE_ALL) */
	EMBER_ALLOC_PLAIN,     /* device memory Ember only accounts for: no regions */
};

struct ember_region {
	uint8_t state;   /* enum ember_region_state */
	uint8_t hinted;  /* the application advised or prefetched it: Ember keeps off */
	uint8_t departed; /* policy: a sliding range left it behind; cleared by its next reference */
	uint8_t released; /* demoting, its bytes already out of the account: promotions queued after it use them */
	uint32_t demand;       /* policy: decayed demand, as of interval demand_epoch */
	uint32_t demand_epoch; /* policy: the interval demand was last brought up to date in */
	uint32_t active_epoch; /* policy: the interval demand last arrived in */
	uint64_t last_ref;     /* policy: when demand last arrived (ns) */
	uint32_t ref_demand;   /* policy: demand just after that arrival, undecayed */
	uint32_t ac_credited;  /* counters.c: 1 + its allocation's ac_launch when last credited while mapped; 0: never */
	uint64_t gap;          /* policy: time between its last two touches; UINT64_MAX until touched twice */
	uint64_t touch_start;  /* policy: when its current touch (references less than an interval apart) began */
	uint32_t touch_demand; /* policy: demand its current (or last) touch brought, undecayed: what it reads a cycle */
	uint32_t touch_refs;   /* policy: references that touch brought (launches' ranges and repeats), whatever their demand */
	uint8_t touch_partial; /* policy: a launch of that touch covered only part of it (ember_policy_extent_edges) */
	uint8_t episode_partial; /* policy: the same, for any launch of its episode */
	uint32_t piece_at;       /* monitor.c, under EMBER_PIECES: 1 + the lowest offset in it a launch pointed at; 0: none */
	uint32_t next_piece;     /* monitor.c: 1 + the first region past it with a piece_at; 0: none */
	uint32_t episode;        /* policy: the episode (host phases before it) its episode_demand counts */
	uint32_t episode_demand; /* policy: demand that episode brought it, undecayed (policy.h's episodes) */
	float score;     /* policy: migration score, halved every score-decay period */
	uint8_t ac_misses; /* counters.c: the launch scan's credits to it while mapped and covered since the counters last named it */
	uint8_t wanted;    /* policy: small and read densely, it found no room at its launch: hot until it arrives */
	uint64_t score_at;      /* when score was last decayed */
	uint64_t arrived_at;    /* when it last became resident */
	uint64_t evicted_at;    /* when it last went back to the host (0: never) */
	uint64_t protect_until; /* grace: reclamation prefers others until then */
	uint64_t ac_scan_at;    /* counters.c: when the launch scan last credited it (0: withheld since) */
	uint64_t ac_missed_at;  /* counters.c: when the first of ac_misses was */
};

/*
 * What one reference credits a range of regions: amount each, but first
 * to its first region and last to its last: under EMBER_PIECES the parts
 * of amount that the reference covers of them (ember_policy_share).
 */
struct ember_share {
	uint32_t amount, first, last;
};

/*
 * Launches that reference the same regions again within a quarter
 * interval, counted and credited as one reference later (policy.c).
 */
struct ember_repeat {
	uint32_t r0, r1, count;   /* count 0: nothing pending */
	struct ember_share share; /* what each repeat credits */
	uint64_t first, last;     /* the first and the latest of the repeats */
};

struct ember_alloc_stats {
	uint64_t promotions, demotions;       /* operations issued */
	uint64_t bytes_promoted, bytes_demoted;
	uint64_t migrate_ns;                  /* driver time of completed migrations */
	uint64_t bytes_displaced;             /* resident bytes the driver moved to host memory on its own */
	uint64_t refreshes, bytes_refreshed;  /* resident ranges prefetched again after a host phase (host_phase.h) */
	uint64_t bytes_populated;             /* mapped bytes the host touched into being (host_touch.h) */
};

struct ember_alloc {
	uint64_t base, size;
	uint32_t nregions;
	int device;                /* the GPU whose budget pays for its residency */
	enum ember_alloc_kind kind;
	bool referenced;           /* a launch has referenced it (static split done) */
	unsigned refs;             /* the table's reference plus each holder's */
	unsigned in_flight;        /* regions with a migration in flight */
	bool freed;                /* removed from the table by cuMemFree */
	unsigned host_touching;    /* mech: regions of it the host's touches are making now (touch_pool.h) */
	uint64_t host_allowed;     /* mech: bytes its touches took of the host's allowance (host_touch.h) */
	void *ctx;                 /* mech: the driver context it was made in, whose teardown frees it; atomic */
	uint64_t id;               /* allocation order, for stats */
	struct ember_alloc_stats stats;
	struct ember_repeat repeat; /* policy: demand counted, not yet credited to the regions */
	uint32_t fresh_r0, fresh_r1; /* policy: regions credited since the last launch promotion (r0 == r1: none) */
	bool any_departed;           /* policy: a sliding range may have left regions behind */
	uint32_t charged;            /* regions not mapped (promoting, resident, demoting): moves.c keeps it */
	uint32_t accessed_by;        /* bit d: advised accessed-by GPU d (gpus.c); read and set atomically */
	uint64_t home_ref;           /* gpus.c: when a launch on `device` last referenced it (ns) */
	uint64_t idle_ref;           /* policy: when a launch with nothing to decide last named it, uncredited (ns) */
	uint32_t refreshed_phase;    /* host_phase.h: the last host phase after which its residents were refreshed */
	uint32_t ac_launch;          /* counters.c: its launches while the counters were read, counted */
	uint64_t ac_launch_at;       /* counters.c: when the latest of them was made */
	uint8_t gpu_access;          /* read_dup.h: what launches did to it (enum ember_gpu_access); atomic */
	bool read_dup;               /* read_dup.h: read-mostly advice may be on ranges of it; atomic */
	bool app_advised;            /* the application advised or prefetched some of it (its regions hinted); atomic */
	void *pool;                  /* mech: the CUmemoryPool a stream-ordered conversion came from (kept.h); else NULL */
	struct ember_region regions[];
};

/*
 * When region r of a was last referenced as the victim order takes it: its
 * own credit, or its allocation's naming by a launch with nothing to decide
 * (idle_ref, policy.h), whichever was later.
 */
static inline uint64_t ember_region_last_named(const struct ember_alloc *a, const struct ember_region *reg)
{
	return reg->last_ref > a->idle_ref ? reg->last_ref : a->idle_ref;
}

/* Bytes of regions [first, first + count): 2 MiB each, less for an allocation's last region. */
static inline uint64_t ember_span_bytes(const struct ember_alloc *a, uint32_t first, uint32_t count)
{
	uint64_t start = (uint64_t)first << EMBER_REGION_SHIFT;
	uint64_t end = (uint64_t)(first + count) << EMBER_REGION_SHIFT;
	return (end > a->size ? a->size : end) - start;
}

/*
 * The end of the run of a's regions from r on that are in state and not
 * the application's (hinted): r itself when region r is not one of them.
 */
static inline uint32_t ember_run_end(const struct ember_alloc *a, uint32_t r, enum ember_region_state state)
{
	while (r < a->nregions && a->regions[r].state == state && !a->regions[r].hinted)
		r++;
	return r;
}

/* Whether none of a's regions is mapped: each is resident, or on its way in or out (charged). */
static inline bool ember_alloc_none_mapped(const struct ember_alloc *a)
{
	return a->charged == a->nregions;
}

/* Bytes of region r. */
static inline uint64_t ember_region_bytes(const struct ember_alloc *a, uint32_t r)
{
	return ember_span_bytes(a, r, 1);
}

/*
 * The table: allocations sorted by base address, and the accounts their
 * residency is charged to. Its lock guards the array, every region state
 * and every account. The shim has one (ember_shim_table); ember-sim and the
 * policy tests make their own.
 */
struct ember_table {
	pthread_mutex_t lock;
	struct ember_alloc **v;
	size_t cap;
	unsigned len;
	uint64_t next_id;
	struct ember_accounts *accounts;
	/* placed (non-plain) allocations: their count and an address envelope, read without the lock */
	unsigned placed_count;
	uint64_t placed_lo, placed_hi;
	/* bumped at every unlock, so what was read under the lock is known unchanged while it stays (settled.c) */
	uint64_t generation;
};

/* An empty table charging to accs. */
void ember_table_init(struct ember_table *t, struct ember_accounts *accs);
/* Forget every allocation (tests, and the child after fork()); the lock is made anew. */
void ember_table_reset(struct ember_table *t);

void ember_table_lock(struct ember_table *t);
void ember_table_unlock(struct ember_table *t);
/* The table's generation, read without the lock: equal to one read earlier, nothing was locked in between. */
uint64_t ember_table_generation(const struct ember_table *t);

/*
 * Register a new allocation of `size` bytes at `base`. Returns it with one
 * reference for the table, or NULL (out of memory, or an overlap, which
 * means the driver handed out the range twice: a bug worth a log line).
 */
struct ember_alloc *ember_table_insert(struct ember_table *t, uint64_t base, uint64_t size, int device,
				       enum ember_alloc_kind kind);

/* The allocation containing addr (lock held; no reference), or NULL. */
struct ember_alloc *ember_table_find(struct ember_table *t, uint64_t addr);

/* The first allocation starting above addr, or NULL (lock held; no reference). */
struct ember_alloc *ember_table_next(struct ember_table *t, uint64_t addr);

/*
 * Call fn for each placed allocation overlapping [ptr, ptr + bytes), with
 * the regions [r0, r1) the range covers (lock held; no reference). Plain
 * allocations, which have no regions, are skipped.
 */
void ember_table_for_each_overlap(struct ember_table *t, uint64_t ptr, uint64_t bytes,
				  void (*fn)(struct ember_alloc *a, uint32_t r0, uint32_t r1, void *arg), void *arg);

/*
 * Remove the allocation that starts at base from the table (cuMemFree).
 * Returns it with the table's reference transferred to the caller, or NULL
 * when the table does not know base. Its resident bytes leave the account now.
 */
struct ember_alloc *ember_table_remove(struct ember_table *t, uint64_t base);

/* Drop a reference; the last one frees the record. */
void ember_alloc_put(struct ember_table *t, struct ember_alloc *a);
/* The same for n references at once, under one lock (a launch's). */
void ember_allocs_put(struct ember_table *t, struct ember_alloc *const *v, unsigned n);

/* Whether any managed or converted allocation exists: launches skip scanning when none does. */
bool ember_table_any_placed(const struct ember_table *t);
/* Lowest and highest address of placed allocations: a cheap filter before lookup. */
void ember_table_bounds(const struct ember_table *t, uint64_t *lo, uint64_t *hi);

/* Number of allocations and a snapshot walk (lock held). */
unsigned ember_table_count(const struct ember_table *t);
struct ember_alloc *ember_table_at(const struct ember_table *t, unsigned i);

/* The account an allocation's residency is charged to (lock held), or NULL. */
static inline struct ember_device_account *ember_table_account(struct ember_table *t, int dev)
{
	return ember_budget_account(t->accounts, dev);
}

#endif
