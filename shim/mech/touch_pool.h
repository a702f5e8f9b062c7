/*
 * The host's touches made in the background (EMBER_POPULATE_ASYNC): a pool
 * of threads that makes the mapped pages of converted memory in host
 * memory while the program goes on (touch_pool.c says why and how).
 */
#ifndef EMBER_TOUCH_POOL_H
#define EMBER_TOUCH_POOL_H

#include <stdbool.h>

#include "regions.h"

/*
 * Queue a's mapped regions for the pool, whose threads start with the
 * first job. False when no thread can run (then the caller touches them
 * itself). The pages already made, or written by the program first, keep
 * what they hold.
 */
bool ember_touch_pool_add(struct ember_alloc *a);

/*
 * Wait for the touches of a's pages under way. Called with none of Ember's
 * locks held, once a is marked freed or the regions about to move are no
 * longer mapped, so no touch of them starts after it.
 */
void ember_touch_pool_settle(struct ember_alloc *a);

/*
 * Drop every queued job and wait for the touches under way: the driver is
 * about to free memory without a cuMemFree for each allocation (a context
 * destroyed or reset). Called with none of Ember's locks held.
 */
void ember_touch_pool_drain(void);

/* The child of fork has none of the pool's threads. */
void ember_touch_pool_after_fork_child(void);

#endif
