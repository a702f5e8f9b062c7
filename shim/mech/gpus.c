/* Several GPUs in one process: see gpus.h. */
#include <cuda.h>
#include <stdio.h>
#include <string.h>

#include "gpus.h"
#include "launch_scan.h"
#include "peer.h"
#include "placement.h"
#include "shim.h"
#include "split.h"
#include "state.h"

static uint32_t in_use;

void ember_gpus_seen(int dev)
{
	if (dev >= 0 && dev < EMBER_MAX_DEVICES)
		__atomic_fetch_or(&in_use, 1u << dev, __ATOMIC_RELAXED);
}

uint32_t ember_gpus_in_use(void)
{
	return __atomic_load_n(&in_use, __ATOMIC_RELAXED);
}

uint32_t ember_gpus_new_alloc_mask(int dev)
{
	uint32_t mask = ember_gpus_in_use();
	if (dev >= 0 && dev < EMBER_MAX_DEVICES)
		mask |= 1u << dev;
	return mask;
}

/* Each GPU's identity, kept when its budget is made known, for the statistics (written without the driver). */
static struct {
	char bus[32], uuid[48];
	bool known;
} ident[EMBER_MAX_DEVICES];

void ember_gpu_describe(int dev, char *out, size_t len)
{
	char bus[32] = "", uuid[48] = "";
	CUuuid u;
	if (EMBER_REAL(cuDeviceGetPCIBusId)(bus, (int)sizeof bus, (CUdevice)dev) != CUDA_SUCCESS)
		bus[0] = 0;
	for (char *c = bus; *c; c++) /* the driver's text goes into logs and JSON: hex digits, ':' and '.' only */
		if (!((*c >= '0' && *c <= '9') || (*c >= 'A' && *c <= 'F') || (*c >= 'a' && *c <= 'f') || *c == ':' ||
		      *c == '.'))
			*c = '?';
	if (EMBER_REAL(cuDeviceGetUuid_v2)(&u, (CUdevice)dev) == CUDA_SUCCESS) {
		const unsigned char *b = (const unsigned char *)u.bytes;
		snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
			 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
	}
	snprintf(out, len, "%s %s", bus[0] ? bus : "(PCI bus id unknown)", uuid[0] ? uuid : "(UUID unknown)");
	if (dev >= 0 && dev < EMBER_MAX_DEVICES) {
		ember_table_lock(EMBER_TABLE);
		memcpy(ident[dev].bus, bus, sizeof bus);
		memcpy(ident[dev].uuid, uuid, sizeof uuid);
		ident[dev].known = true;
		ember_table_unlock(EMBER_TABLE);
	}
}

bool ember_gpu_identity(int dev, const char **bus, const char **uuid)
{
	if (dev < 0 || dev >= EMBER_MAX_DEVICES || !ident[dev].known)
		return false;
	*bus = ident[dev].bus;
	*uuid = ident[dev].uuid;
	return true;
}

/* What a launch on dev does to one allocation, decided under the table lock. */
enum step { STEP_NONE, STEP_REHOMED, STEP_HANDOVER };

static enum step decide(struct ember_alloc *a, int dev, uint64_t now, int *from)
{
	*from = a->device;
	if (a->freed || a->device == dev)
		return STEP_NONE;
	if (a->charged == 0 && a->in_flight == 0) {
		__atomic_store_n(&a->device, dev, __ATOMIC_RELAXED);
		__atomic_store_n(&a->home_ref, now, __ATOMIC_RELAXED);
		return STEP_REHOMED;
	}
	/* its GPU's silence counts from the first launch seen (a converted allocation is populated before any) */
	uint64_t home_ref = __atomic_load_n(&a->home_ref, __ATOMIC_RELAXED);
	if (!home_ref) {
		__atomic_store_n(&a->home_ref, now, __ATOMIC_RELAXED);
		return STEP_NONE;
	}
	const struct ember_policy_params *p = &ember_shim_ctx.params;
	uint64_t stale = (uint64_t)p->stale_intervals * p->interval_ns;
	if (ember_shim_ctx.adaptive && a->in_flight == 0 && now > home_ref && now - home_ref > stale)
		return STEP_HANDOVER;
	return STEP_NONE;
}

/* ---- the peer tier (peer.h), its table under the table lock ---- */

static struct ember_peer_tier peers;

static void peer_note(void *arg, const struct ember_peer_move *m, int r)
{
	if (r == 0)
		ember_debug("%#llx: %u regions from %u %s GPU %d%s", (unsigned long long)m->a->base, m->count, m->first,
			    m->to >= 0 ? "lent to" : "back to host memory from", m->to >= 0 ? m->to : m->from,
			    m->to >= 0 ? ", read over the peer link" : "");
	else if (r > 0)
		ember_debug("%#llx: a peer move of %u regions failed (CUresult %d); they stay where they were",
			    (unsigned long long)m->a->base, m->count, r);
}

static void peer_measured(void *arg, int dev, int g, int r, double peer, double host)
{
	if (r != 0)
		ember_debug("cannot measure GPU %d's link to GPU %d (CUresult %d): no peer tier between them", dev, g, r);
	else if (peer > 0)
		ember_info("GPU %d reads GPU %d's memory at %.1f GB/s and host memory at %.1f GB/s: %s", dev, g,
			   peer / 1e9, host / 1e9,
			   peer > host ? "what its budget has no room for may go there (the peer tier)"
				       : "no peer tier between them");
	else
		ember_debug("GPU %d has no peer access to GPU %d: no peer tier between them", dev, g);
}

static struct ember_peer_seam seam(void)
{
	return (struct ember_peer_seam){ &peers, EMBER_TABLE, ember_shim_engine.ops, ember_shim_engine.ops_self,
					 peer_note, peer_measured, NULL };
}

void ember_gpus_after_launch(struct ember_scan *scan, const struct ember_at *at)
{
	if (!scan || !ember_strategy->moves)
		return;
	struct ember_peer_seam s = seam();
	ember_peer_after_launch(&s, at, scan->allocs, scan->n, ember_gpus_in_use());
}

/* Before the strategy's launch on dev: what dev holds for other GPUs gives way to its own demand. */
static void peer_before_launch(struct ember_scan *scan, const struct ember_at *at)
{
	uint32_t in_use = ember_gpus_in_use();
	if (!ember_strategy->moves || !(in_use & (in_use - 1)))
		return; /* one GPU in use: nobody else's regions to hold */
	const struct ember_policy_params *p = &ember_shim_ctx.params;
	struct ember_peer_seam s = seam();
	uint64_t out = ember_peer_before_launch(&s, at, scan->allocs, scan->n, ember_shim_ctx.adaptive,
						(uint64_t)p->stale_intervals * p->interval_ns);
	if (out)
		ember_debug("GPU %d's own launch: %llu bytes it held for other GPUs go back to host memory", at->device,
			    (unsigned long long)out);
}

void ember_gpus_freed(struct ember_alloc *a)
{
	if (!a)
		return;
	ember_table_lock(EMBER_TABLE);
	ember_peer_forget(&peers, EMBER_TABLE->accounts, a);
	ember_table_unlock(EMBER_TABLE);
}

void ember_gpus_displaced(struct ember_alloc *a, uint32_t r0, uint32_t r1)
{
	ember_peer_displaced(&peers, EMBER_TABLE->accounts, a, r0, r1); /* no log line under the table lock */
}

bool ember_gpus_peer_stats(int dev, struct ember_peer_stats *out)
{
	if (dev < 0 || dev >= EMBER_MAX_DEVICES)
		return false;
	*out = peers.stats[dev];
	return out->held || out->placed || out->pushed_out || out->borrowed;
}

void ember_gpus_launch(struct ember_scan *scan, int dev, const struct ember_at *at)
{
	if (!scan || dev < 0 || dev >= EMBER_MAX_DEVICES)
		return;
	const struct ember_ops *ops = ember_shim_engine.ops;
	uint64_t now = ops->now(ember_shim_engine.ops_self);
	struct ember_moves handover = { 0 };
	for (unsigned i = 0; i < scan->n; i++) {
		struct ember_alloc *a = scan->allocs[i];
		if (a->kind == EMBER_ALLOC_PLAIN)
			continue;
		uint32_t bit = 1u << dev;
		if (!(__atomic_load_n(&a->accessed_by, __ATOMIC_RELAXED) & bit) && ops->advise_access) {
			/* before the launch, or its first reads of host pages fault one 4 KiB page at a time */
			int r = ops->advise_access(ember_shim_engine.ops_self, a, dev);
			if (r == 0)
				__atomic_fetch_or(&a->accessed_by, bit, __ATOMIC_RELAXED);
			else
				ember_debug("advising %#llx accessed by GPU %d failed (CUresult %d)",
					    (unsigned long long)a->base, dev, r);
		}
		/* the common case, without the lock: its own GPU referenced it */
		if (__atomic_load_n(&a->device, __ATOMIC_RELAXED) == dev) {
			__atomic_store_n(&a->home_ref, now, __ATOMIC_RELAXED);
			continue;
		}
		int from;
		ember_table_lock(EMBER_TABLE);
		enum step s = decide(a, dev, now, &from);
		if (s == STEP_HANDOVER)
			ember_split_demote(&ember_shim_ctx, a, 0, a->nregions, &handover);
		ember_table_unlock(EMBER_TABLE);
		if (s == STEP_REHOMED)
			ember_debug("%#llx: referenced by a launch on GPU %d, nothing of it on GPU %d: placed for GPU %d now",
				    (unsigned long long)a->base, dev, from, dev);
		else if (s == STEP_HANDOVER)
			ember_debug("%#llx: used on GPU %d and no longer on GPU %d: its regions there go back to the host",
				    (unsigned long long)a->base, dev, from);
	}
	if (handover.n)
		ember_engine_start(&ember_shim_engine, &handover, at, EMBER_ORDER_NONE);
	else
		ember_moves_free(&handover);
	peer_before_launch(scan, at);
}
