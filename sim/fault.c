/*
 * What touching managed memory does: the driver's fault path, per block.
 *
 * A GPU access is served, by the block's state and advice, as one of:
 *   local       the block is on this GPU: device memory speed
 *   mapped      this GPU has a mapping to where it is (accessed-by, or an
 *               earlier fault-and-map): host link speed, nothing moves
 *   fault-map   the block is at its preferred location elsewhere: every
 *               page faults once and is mapped, then it is "mapped"
 *   migrate     otherwise: the block moves to this GPU (whole block)
 *   duplicate   read of a read-mostly block in host memory: a read-only
 *               copy is made on this GPU
 *   populate    first touch of a never-populated block: it is populated on
 *               this GPU, or in host memory when the CPU is preferred
 * Blocks come in only where there is room, after evicting others; where
 * there is none, the GPU reads them through a mapping instead.
 *
 * A CPU access (ember_sim_access outside a kernel) populates in host
 * memory and pulls device-resident blocks back, as a CPU fault does.
 */
#include "cost.h"
#include "sim.h"

enum gpu_path { LOCAL, MAPPED, FAULT_MAP, MIGRATE, DUPLICATE, POPULATE, FIRST_TOUCH_HOST };

static uint32_t bit(int dev)
{
	return 1u << dev;
}

static enum gpu_path plan(const struct sim_block *b, int dev, bool write)
{
	if (b->where == dev)
		return LOCAL;
	if (b->where == SIM_LOC_NONE)
		return b->preferred == SIM_LOC_HOST ? FIRST_TOUCH_HOST : POPULATE;
	if (b->read_mostly && !write && b->where == SIM_LOC_HOST)
		return DUPLICATE;
	if (b->mapped & bit(dev))
		return MAPPED;
	if (b->preferred == b->where)
		return FAULT_MAP;
	return MIGRATE;
}

static bool brings_in(enum gpu_path p)
{
	return p == MIGRATE || p == DUPLICATE || p == POPULATE;
}

/*
 * Reading through a mapping: host memory at the mapped rate, another GPU's
 * over the peer link, or through host memory where the two have none
 * (peers.c): no faster than a mapped host read.
 */
static uint64_t mapped_read(const struct sim_block *b, int dev, size_t n)
{
	return sim_transfer_ns(n, b->where >= 0 && sim_peer_link(dev, b->where) ? SIM_PEER_BPS : SIM_MAPPED_BPS);
}

/* The block is being accessed where it is, through a mapping it now has. */
static uint64_t read_remotely(struct sim_block *b, int dev, size_t n)
{
	b->mapped |= bit(dev);
	return mapped_read(b, dev, n);
}

/* One block, n of whose bytes a kernel on dev touches. */
static uint64_t gpu_touch(struct sim_alloc *a, size_t i, size_t n, bool write, int dev)
{
	struct sim_block *b = &a->blocks[i];
	size_t len = sim_block_len(a, i);
	enum gpu_path path = plan(b, dev, write);
	bool room = !brings_in(path) || sim_device_free(dev) >= len;
	uint64_t device_time = sim_transfer_ns(n, SIM_DEVICE_MEMORY_BPS);

	switch (path) {
	case LOCAL:
		if (write && b->host_copy) /* a write invalidates the other copy */
			b->host_copy = false;
		return device_time;
	case MAPPED:
		return mapped_read(b, dev, n);
	case FAULT_MAP:
		b->mapped |= bit(dev);
		return sim_transfer_ns(n, SIM_FAULT_MAP_BPS);
	case FIRST_TOUCH_HOST:
		sim_block_move(a, i, SIM_LOC_HOST);
		b->mapped |= bit(dev);
		return sim_transfer_ns(n, SIM_FIRST_TOUCH_HOST_BPS);
	case POPULATE:
		if (!room) {
			sim_block_move(a, i, SIM_LOC_HOST);
			b->mapped |= bit(dev);
			return sim_transfer_ns(n, SIM_FIRST_TOUCH_HOST_BPS);
		}
		sim_block_move(a, i, dev);
		return sim_transfer_ns(n, SIM_FAULT_POPULATE_BPS);
	case MIGRATE:
		if (!room)
			return read_remotely(b, dev, n);
		sim_block_move(a, i, dev);
		return sim_transfer_ns(len, SIM_FAULT_MIGRATE_BPS) + device_time;
	case DUPLICATE:
		if (!room)
			return read_remotely(b, dev, n);
		sim_block_duplicate(a, i, dev);
		return sim_transfer_ns(len, SIM_FAULT_MIGRATE_BPS) + device_time;
	}
	return 0;
}

static uint64_t cpu_touch(struct sim_alloc *a, size_t i, bool write)
{
	struct sim_block *b = &a->blocks[i];
	b->cpu_accesses++;
	if (b->where == SIM_LOC_NONE) {
		sim_block_move(a, i, SIM_LOC_HOST);
		return 0;
	}
	if (b->where == SIM_LOC_HOST)
		return 0;
	if (b->host_copy) { /* reads use the host copy; a write collapses to it */
		if (write)
			sim_block_drop_device_copy(a, i);
		return 0;
	}
	size_t len = sim_block_len(a, i);
	if (b->read_mostly && !write) { /* read duplication: the host's read makes a copy, the GPU keeps its own */
		b->host_copy = true;
		sim_mem.migrated[EMBER_SIM_TO_HOST] += len;
		return sim_transfer_ns(len, SIM_DEMOTE_BPS);
	}
	sim_block_move(a, i, SIM_LOC_HOST);
	return sim_transfer_ns(len, SIM_DEMOTE_BPS);
}

/* Bytes of [addr, addr + len) inside block i. */
static size_t overlap(const struct sim_alloc *a, size_t i, uintptr_t addr, size_t len)
{
	uintptr_t lo = a->base + (i << SIM_BLOCK_SHIFT), hi = lo + sim_block_len(a, i);
	return SIM_MIN(hi, addr + len) - SIM_MAX(lo, addr);
}

uint64_t sim_managed_access(struct sim_alloc *a, uintptr_t addr, size_t len, bool write, int dev)
{
	size_t first, end;
	sim_block_span(a, addr, len, &first, &end);
	uint64_t cost = 0;
	if (dev < 0) {
		for (size_t i = first; i < end; i++)
			cost += cpu_touch(a, i, write);
		return cost;
	}
	/* First make room for everything this access brings in, in one eviction pass. */
	uint64_t incoming = 0;
	for (size_t i = first; i < end; i++) {
		sim_block_notice_cpu(a, i);
		if (brings_in(plan(&a->blocks[i], dev, write)))
			incoming += sim_block_len(a, i);
	}
	if (incoming) {
		bool room; /* gpu_touch checks again, block by block */
		cost += sim_make_room(dev, incoming, a, first, end, &room);
	}
	uint64_t use = ++sim_mem.uses;
	for (size_t i = first; i < end; i++) {
		struct sim_block *b = &a->blocks[i];
		size_t n = overlap(a, i, addr, len);
		b->gpu_accesses++;
		b->gpu_bytes += n;
		b->last_use = use;
		cost += gpu_touch(a, i, n, write, dev);
	}
	return cost;
}
