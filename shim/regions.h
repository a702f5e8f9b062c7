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
#include <stdint.h>

#define EMBER_REGION_SHIFT 21
#define EMBER_REGION_BYTES ((uint64_t)1 << EMBER_REGION_SHIFT)
#define EMBER_MAX_DEVICES 16

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
	uint64_t gap;          /* policy: time between its last two references; UINT64_MAX until seen twice */
	float score;     /* policy: migration score, halved every score-decay period */
	uint64_t score_at;      /* when score was last decayed */
	uint64_t arrived_at;    /* when it last became resident */
	uint64_t evicted_at;    /* when it last went back to the host (0: never) */
	uint64_t protect_until; /* grace: reclamation prefers others until then */
};

struct ember_alloc_stats {
	uint64_t promotions, demotions;       /* operations issued */
	uint64_t bytes_promoted, bytes_demoted;
	uint64_t migrate_ns;                  /* driver time of completed migrations */
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
	uint64_t id;               /* allocation order, for stats */
	struct ember_alloc_stats stats;
	struct ember_region regions[];
};

/* Bytes of region r: 2 MiB, less for an allocation's last region. */
static inline uint64_t ember_region_bytes(const struct ember_alloc *a, uint32_t r)
{
	uint64_t start = (uint64_t)r << EMBER_REGION_SHIFT;
	uint64_t end = start + EMBER_REGION_BYTES;
	return (end > a->size ? a->size : end) - start;
}

/* Per-GPU accounting, in bytes. */
struct ember_device_account {
	uint64_t budget;           /* 0: not yet known (no init) */
	uint64_t high, low;        /* budget x watermarks */
	uint64_t resident;         /* Ember's resident + promoting regions */
	uint64_t other;            /* plain allocations Ember saw (cuMemAlloc & co.) */
	uint64_t peak;             /* high-water mark of resident + other */
	uint64_t promotions, demotions, bytes_promoted, bytes_demoted, migrate_ns;
};

/* The table lock guards the sorted array, every region state and every account. */
void ember_regions_lock(void);
void ember_regions_unlock(void);

/*
 * Register a new allocation of `size` bytes at `base`. Returns it with one
 * reference for the table, or NULL (out of memory, or an overlap, which
 * means the driver handed out the range twice: a bug worth a log line).
 */
struct ember_alloc *ember_regions_insert(uint64_t base, uint64_t size, int device,
					 enum ember_alloc_kind kind);

/* The allocation containing addr, with a reference the caller must put; or NULL. */
struct ember_alloc *ember_regions_find(uint64_t addr);
/* Same, with the table lock already held; takes no reference. */
struct ember_alloc *ember_regions_find_locked(uint64_t addr);

/* The first allocation starting above addr, or NULL (lock held; no reference). */
struct ember_alloc *ember_regions_next_locked(uint64_t addr);

/*
 * Remove the allocation that starts at base from the table (cuMemFree).
 * Returns it with the table's reference transferred to the caller, or NULL
 * when Ember does not know base. Its resident bytes leave the account now.
 */
struct ember_alloc *ember_regions_remove(uint64_t base);

void ember_alloc_get(struct ember_alloc *a);
/* Drop a reference; the last one frees the record. */
void ember_alloc_put(struct ember_alloc *a);

/* The account of a device (0 <= dev < EMBER_MAX_DEVICES); lock held to modify. */
struct ember_device_account *ember_account(int dev);
/* Bytes Ember may still make resident on dev below its high watermark (lock held). */
uint64_t ember_account_room_locked(int dev);
/* Record the current total in the high-water mark (lock held). */
void ember_account_note_peak_locked(int dev);

/* Take bytes out of a device's resident account, never below zero (table locked). */
static inline void ember_account_leave(struct ember_device_account *acc, uint64_t bytes)
{
	acc->resident -= bytes < acc->resident ? bytes : acc->resident;
}

/* Whether any managed or converted allocation exists: launches skip scanning when none does. */
bool ember_regions_any_placed(void);
/* Lowest and highest address of placed allocations: a cheap filter before lookup. */
void ember_regions_bounds(uint64_t *lo, uint64_t *hi);

/* Number of allocations and a snapshot walk, for stats (lock held). */
unsigned ember_regions_count_locked(void);
struct ember_alloc *ember_regions_at_locked(unsigned i);

/* Forget everything (tests, and the child after fork()). */
void ember_regions_reset(void);

#endif
