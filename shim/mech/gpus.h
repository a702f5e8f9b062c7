/*
 * Several GPUs in one process (issue 13, part 1): which physical GPU each
 * ordinal is, which GPUs are in use, and what a launch on one GPU does to
 * the allocations it references.
 *
 * Ordinals are the process's own, as CUDA_VISIBLE_DEVICES leaves them (the
 * driver renumbers; Ember never parses the variable): EMBER_BUDGET_<n>,
 * accounts, statistics and logs all use them, and the budget's log line
 * names the physical GPU (PCI bus id and UUID) an ordinal is.
 *
 * Where an allocation's residency goes (its `device`, the GPU whose budget
 * pays) follows the launches that reference it:
 *   - it starts as the GPU of the context it was allocated in;
 *   - a launch on GPU B that references it while nothing of it is charged
 *     (no region promoting, resident or demoting) makes B its GPU: the
 *     static split and adaptive promotions then go to B, under B's budget
 *     (a program that allocates in device 0's context and computes on 1);
 *   - while regions are charged to GPU A, a launch on B leaves them on A
 *     (B reads them over the peer link where the GPUs have one, else
 *     through the host) and promotes nothing onto A; in adaptive mode,
 *     once no launch on A has referenced it for EMBER_STALE_INTERVALS
 *     intervals, a launch on B sends A's regions back to the host (a
 *     handover), and the first launch on B after they have gone makes B
 *     its GPU, whose promotions then bring it to B. Static mode splits once
 *     and keeps the split where it was made.
 *   - every GPU that launches a kernel referencing it is added to its
 *     accessed-by set before that launch (one advice per GPU and
 *     allocation), and allocations are advised accessed-by for the GPUs in
 *     use when they are made, not every GPU the process can see.
 */
#ifndef EMBER_GPUS_H
#define EMBER_GPUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops.h"
#include "regions.h"

struct ember_scan;

/* GPU dev has a context Ember has seen (an allocation, a launch, cuMemGetInfo on it). */
void ember_gpus_seen(int dev);
/* Bit d: GPU d is in use. */
uint32_t ember_gpus_in_use(void);

/* "00000000:1A:00.0 GPU-456d6265-..." for ordinal dev, or what of it the driver answers. */
void ember_gpu_describe(int dev, char *out, size_t len);

/*
 * The PCI bus id and UUID ember_gpu_describe found for dev ("" for what the
 * driver did not answer), or false before it ran. Table lock held.
 */
bool ember_gpu_identity(int dev, const char **bus, const char **uuid);

/* The accessed-by set a new allocation on dev is advised with: dev and every GPU in use. */
uint32_t ember_gpus_new_alloc_mask(int dev);

/*
 * A launch on GPU dev at `at`, referencing scan's allocations, is about
 * to run: accessed-by for dev where it is missing, the allocations' GPU
 * moved to dev where nothing is charged, and (adaptive) the handover of
 * allocations their GPU no longer uses. Before the strategy's launch.
 */
void ember_gpus_launch(struct ember_scan *scan, int dev, const struct ember_at *at);

/*
 * The peer tier (shim/policy/peer_tier.h), wired into placement:
 *   - after the strategy's launch on GPU A (at->device), when A's budget is
 *     full and another GPU in use has room below its low watermark, the
 *     mapped regions of A's referenced allocations that A cannot take are
 *     prefetched onto that GPU B, advised accessed-by A, and charged to B's
 *     budget; the launch's stream waits for them, as for a promotion. The
 *     link between A and B is measured first, once (ops peer_link), and a
 *     pair whose peer copy is no faster than the host link gets nothing;
 *   - before the strategy's launch on B, B's own demand (mapped regions of
 *     its allocations its placement may promote) sends what B holds for
 *     others back to host memory while B's room is short of it, and
 *     nothing is lent to B again for EMBER_STALE_INTERVALS intervals;
 *   - a free takes its lent regions off their holders' accounts.
 * Only GPUs in use (with a context Ember has seen) hold regions.
 */
void ember_gpus_after_launch(struct ember_scan *scan, const struct ember_at *at);
/* a was removed from the table by a free: its regions on peers leave their accounts. */
void ember_gpus_freed(struct ember_alloc *a);

/* The driver moved regions [r0, r1) of a to host memory on its own (table locked): those lent leave their holders' accounts. */
void ember_gpus_displaced(struct ember_alloc *a, uint32_t r0, uint32_t r1);

struct ember_peer_stats;
/* The peer tier's figures for dev (table lock held); false when all are 0. */
bool ember_gpus_peer_stats(int dev, struct ember_peer_stats *out);

#endif
