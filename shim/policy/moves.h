/*
 * Moves: the one type every placement decision takes, whoever makes it
 * (the static split, the adaptive policy, a hint). A move is prepared under
 * the table lock (regions marked in flight, a reference on the allocation)
 * and finished into the table when it completes or fails.
 */
#ifndef EMBER_MOVES_H
#define EMBER_MOVES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "regions.h"

/* Move regions [first, first + count) of alloc to its GPU (promote) or back to the host. */
struct ember_move {
	struct ember_alloc *alloc; /* holds a reference until the move is finished */
	uint32_t first, count;
	bool promote;
	/*
	 * A refresh: resident regions prefetched to their GPU again, where the
	 * host may have taken pages of them (host_phase.h). Their state and
	 * the account stay as they are, whatever the prefetch does.
	 */
	bool refresh;
};

struct ember_moves {
	struct ember_move *v;
	size_t n, cap;
};

/*
 * Prepare a move (table locked): its regions become promoting or demoting,
 * the allocation gains a reference and counts them in flight. The caller
 * charges the budget. Returns false when out of memory (nothing changed).
 */
bool ember_moves_push(struct ember_moves *m, struct ember_alloc *a, uint32_t first, uint32_t count, bool promote);
void ember_moves_free(struct ember_moves *m);

/*
 * Prepare refreshes (table locked) of a's resident regions that are not the
 * application's: one move per run, each promoting while in flight.
 */
void ember_moves_push_refresh(struct ember_moves *m, struct ember_alloc *a);

/* Bytes a move covers. */
uint64_t ember_move_bytes(const struct ember_move *m);

struct ember_policy_ctx;

/*
 * A move completed (ok) or failed, after ns of driver time, at now: set its
 * regions' states, settle the account, keep the statistics, tell the
 * policy, and drop the move's reference. Takes the table lock itself.
 *
 * A promotion that failed leaves its regions mapped (prefetch never changes
 * bytes, only where they are) and returns its reservation. A demotion that
 * failed leaves them resident and still accounted.
 */
void ember_move_finish(struct ember_policy_ctx *pc, const struct ember_move *m, bool ok, uint64_t ns, uint64_t now);

/*
 * The driver moved pages of regions [r0, r1) of a to host memory on its own
 * (a host touch of GPU-preferred pages, its eviction): those resident there
 * are mapped again and leave the account, so that the next placement that
 * looks at them promotes them as it would any mapped region. Table locked
 * by the caller; regions in flight or the application's are left alone.
 * Returns the bytes.
 */
uint64_t ember_regions_displaced(struct ember_policy_ctx *pc, struct ember_alloc *a, uint32_t r0, uint32_t r1);

#endif
