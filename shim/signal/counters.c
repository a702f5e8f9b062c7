/* The access-counter reader: checks, and demand for mapped regions in place of the launch scan's guess (counters.h). */
#include <string.h>

#include "counters.h"
#include "monitor.h"
#include "state.h"

_Static_assert(sizeof(struct ember_ac_record) == 40, "the record is 40 bytes");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "records are little-endian, read in place");

#define PIECE (1ull << EMBER_AC_SUBREGION_SHIFT)   /* one bit of the mask: 64 KiB */
#define COUNTED (1ull << EMBER_AC_REGION_SHIFT)    /* what one counter tracks: 2 MiB */
#define PIECES (COUNTED / PIECE)                   /* 32: the mask's bits */
#define USER_TOP (1ull << 57)                      /* above it, no process address (5-level paging's limit) */

_Static_assert(PIECES == 32, "the mask has one bit per piece");
_Static_assert(EMBER_AC_REGION_SHIFT == EMBER_REGION_SHIFT, "a counter tracks one of Ember's regions");

enum ember_ac_verdict ember_ac_check(const void *bytes, size_t len, struct ember_ac_record *out)
{
	struct ember_ac_record r;
	if (!bytes || !out || len < sizeof r)
		return EMBER_AC_TRUNCATED;
	memcpy(&r, bytes, sizeof r);
	if (r.magic != EMBER_AC_MAGIC || r.version != EMBER_AC_VERSION || r.size != sizeof r || r.reserved)
		return EMBER_AC_MALFORMED;
	if (!r.count || (r.va & (PIECE - 1)))
		return EMBER_AC_MALFORMED;
	if (r.va < PIECE || (r.va & ~(COUNTED - 1)) > USER_TOP - COUNTED || r.gpu >= EMBER_AC_MAX_GPUS)
		return EMBER_AC_OUT_OF_RANGE;
	*out = r;
	return EMBER_AC_OK;
}

static uint16_t u16_at(const unsigned char *p, size_t off)
{
	uint16_t v;
	memcpy(&v, p + off, sizeof v);
	return v;
}

static uint32_t u32_at(const unsigned char *p, size_t off)
{
	uint32_t v;
	memcpy(&v, p + off, sizeof v);
	return v;
}

static uint64_t u64_at(const unsigned char *p, size_t off)
{
	uint64_t v;
	memcpy(&v, p + off, sizeof v);
	return v;
}

enum ember_ac_verdict ember_ac_from_uvm(const void *entry, size_t entry_size, struct ember_ac_record *out)
{
	const unsigned char *p = entry;
	if (!p || !out || entry_size < EMBER_AC_UVM_END)
		return EMBER_AC_TRUNCATED;
	/* the type, then the padding the driver zeroes: byte 1, bytes 20-23, and the entry past the record */
	if (p[0] != EMBER_AC_UVM_EVENT || p[1] || u32_at(p, EMBER_AC_UVM_MASK + 4))
		return EMBER_AC_MALFORMED;
	for (size_t i = EMBER_AC_UVM_END; i < entry_size; i++)
		if (p[i])
			return EMBER_AC_MALFORMED;
	unsigned gpu = u16_at(p, EMBER_AC_UVM_GPU);
	if (gpu == 0 || gpu > EMBER_AC_MAX_GPUS)
		return EMBER_AC_OUT_OF_RANGE; /* 0 is the CPU, which has no counters */
	struct ember_ac_record r = {
		.magic = EMBER_AC_MAGIC,
		.version = EMBER_AC_VERSION,
		.size = sizeof r,
		.va = u64_at(p, EMBER_AC_UVM_VA),
		.count = u32_at(p, EMBER_AC_UVM_COUNT),
		.subregion_mask = u32_at(p, EMBER_AC_UVM_MASK),
		.gpu = gpu - 1,
		.timestamp_ns = u64_at(p, EMBER_AC_UVM_TIMESTAMP),
	};
	return ember_ac_check(&r, sizeof r, out);
}

void ember_ac_count_bad(struct ember_ac_reader *rd, enum ember_ac_verdict v)
{
	struct ember_ac_counts *c = &rd->counts;
	c->records++;
	switch (v) {
	case EMBER_AC_TRUNCATED:
		c->truncated++;
		break;
	case EMBER_AC_MALFORMED:
		c->malformed++;
		break;
	case EMBER_AC_OUT_OF_RANGE:
		c->out_of_range++;
		break;
	case EMBER_AC_FOREIGN:
		c->foreign++;
		break;
	case EMBER_AC_REPEAT:
		c->repeats++;
		break;
	case EMBER_AC_OK:
		break;
	}
}

static uint64_t cover_ns(const struct ember_ac_reader *rd)
{
	return rd->cover_ns ? rd->cover_ns : EMBER_AC_COVER_NS;
}

static unsigned cover_slot(const struct ember_alloc *a)
{
	return (unsigned)(a->id % EMBER_AC_COVER_SLOTS);
}

/* The counters spoke for a at now. */
static void cover(struct ember_ac_reader *rd, const struct ember_alloc *a, uint64_t now)
{
	unsigned slot = cover_slot(a);
	uint64_t until = now + cover_ns(rd);
	if (rd->cover[slot].id != a->id)
		rd->cover[slot].pending = false; /* the older allocation's, forgotten */
	rd->cover[slot].id = a->id;
	rd->cover[slot].until = until < now ? UINT64_MAX : until;
}

bool ember_ac_covers(const struct ember_ac_reader *rd, const struct ember_alloc *a, uint64_t now)
{
	unsigned slot = cover_slot(a);
	return rd->cover[slot].until && rd->cover[slot].id == a->id && now < rd->cover[slot].until;
}

/* The placed allocation that [at, at + PIECE) reaches into first, and where in it; NULL when none does. */
static struct ember_alloc *piece_in(struct ember_table *t, uint64_t at, uint64_t *where)
{
	struct ember_alloc *a = ember_table_find(t, at);
	*where = at;
	if (!a) {
		a = ember_table_next(t, at);
		if (!a || a->base >= at + PIECE)
			return NULL;
		*where = a->base;
	}
	return a->kind != EMBER_ALLOC_PLAIN && a->nregions ? a : NULL;
}

/* A run of regions [r0, r1) of a, credited once. */
struct run {
	struct ember_alloc *a;
	uint32_t r0, r1;
};

static void credit_run(struct ember_ac_reader *rd, struct ember_policy_ctx *pc, struct run *run, uint64_t now)
{
	if (!run->a || run->r0 >= run->r1)
		return;
	ember_policy_demand(pc, run->a, run->r0, run->r1, EMBER_LAUNCH_DEMAND, now);
	rd->counts.regions += run->r1 - run->r0;
	rd->cover[cover_slot(run->a)].pending = true; /* cover() named it first */
	run->a = NULL;
}

/* Whether the launch scan credited the region lately (within cover_ns): its reads are that credit's. */
static bool claimed(const struct ember_ac_reader *rd, const struct ember_region *reg, uint64_t now)
{
	return reg->ac_scan_at && (now < reg->ac_scan_at || now - reg->ac_scan_at < cover_ns(rd));
}

/* The tag of a's current launch, as a region's ac_credited holds it (0: never credited). */
static uint32_t launch_tag(const struct ember_alloc *a)
{
	return a->ac_launch + 1;
}

enum ember_ac_verdict ember_ac_credit(struct ember_ac_reader *rd, struct ember_policy_ctx *pc,
				      const struct ember_ac_record *r, uint64_t now)
{
	uint64_t base = r->va & ~(COUNTED - 1);
	uint32_t mask = r->subregion_mask ? r->subregion_mask : UINT32_MAX; /* no mask: the whole region */
	uint64_t before = rd->counts.regions;
	bool placed = false;
	struct run run = { 0 };
	for (unsigned i = 0; i < PIECES; i++) {
		if (!(mask >> i & 1))
			continue;
		uint64_t where;
		struct ember_alloc *a = piece_in(pc->table, base + i * PIECE, &where);
		if (!a)
			continue;
		uint32_t reg = (uint32_t)((where - a->base) >> EMBER_REGION_SHIFT);
		if (reg >= a->nregions)
			continue;
		placed = true;
		cover(rd, a, now);
		if (a == run.a && reg >= run.r0 && reg < run.r1)
			continue; /* another piece of a region this record credits */
		struct ember_region *region = &a->regions[reg];
		if (region->state != EMBER_REGION_MAPPED)
			continue; /* read before it moved: the scan credits it where it is now */
		region->ac_misses = 0; /* a kernel reads it: the scan's credit stands */
		if (claimed(rd, region, now) || region->ac_credited == launch_tag(a))
			continue; /* the read the scan credited lately, or one this launch of a has credited already */
		region->ac_credited = launch_tag(a);
		if (a == run.a && reg == run.r1) {
			run.r1++;
			continue;
		}
		credit_run(rd, pc, &run, now);
		run = (struct run){ a, reg, reg + 1 };
	}
	credit_run(rd, pc, &run, now);
	if (rd->counts.regions == before) {
		enum ember_ac_verdict v = placed ? EMBER_AC_REPEAT : EMBER_AC_FOREIGN;
		ember_ac_count_bad(rd, v);
		return v;
	}
	rd->counts.records++;
	rd->counts.credited++;
	return EMBER_AC_OK;
}

size_t ember_ac_feed(struct ember_ac_reader *rd, struct ember_policy_ctx *pc, const void *buf, size_t len,
		     uint64_t now)
{
	const unsigned char *p = buf;
	size_t credited = 0;
	if (!p)
		len = 0;
	for (; len >= sizeof(struct ember_ac_record); p += sizeof(struct ember_ac_record),
						      len -= sizeof(struct ember_ac_record)) {
		struct ember_ac_record r;
		enum ember_ac_verdict v = ember_ac_check(p, sizeof r, &r);
		if (v != EMBER_AC_OK)
			ember_ac_count_bad(rd, v);
		else if (ember_ac_credit(rd, pc, &r, now) == EMBER_AC_OK)
			credited++;
	}
	if (len)
		ember_ac_count_bad(rd, EMBER_AC_TRUNCATED);
	return credited;
}

/* Whether the scan credited a mapped region often and long enough with no notification naming it. */
static bool refuted(const struct ember_region *reg, uint64_t now)
{
	return reg->ac_misses >= EMBER_AC_UNCONFIRMED && now >= reg->ac_missed_at &&
	       now - reg->ac_missed_at >= EMBER_AC_UNCONFIRMED_NS;
}

/*
 * share for the run [from, to) of a launch's regions [r0, r1): the launch's
 * edge parts where the run's first or last region is one of its edges (a
 * run of one region at the launch's end takes its last part as its first)
 */
static struct ember_share run_share(struct ember_share share, uint32_t from, uint32_t to, uint32_t r0, uint32_t r1)
{
	uint32_t first = from == r0 ? share.first : from + 1 == r1 ? share.last : share.amount;
	uint32_t last = to == r1 ? share.last : to - 1 == r0 ? share.first : share.amount;
	return (struct ember_share){ share.amount, first, last };
}

/*
 * The scan's credit of share to regions [r0, r1) of a: one
 * ember_policy_demand_shared over them all, as without counters, unless
 * the counters cover a and some mapped region's credit is withheld; then
 * in runs around those. Each region credited is claimed for the scan.
 */
static bool scan_demand(struct ember_ac_reader *rd, struct ember_policy_ctx *pc, struct ember_alloc *a, uint32_t r0,
			uint32_t r1, struct ember_share share, uint64_t now)
{
	bool fresh = false, covered = ember_ac_covers(rd, a, now);
	uint32_t from = r0;
	for (uint32_t r = r0; r < r1; r++) {
		struct ember_region *reg = &a->regions[r];
		if (reg->state != EMBER_REGION_MAPPED) {
			reg->ac_misses = 0; /* the counters cannot see it: the scan's credit stands */
			reg->ac_scan_at = now; /* a read while it moves back is this credit's */
			continue;
		}
		if (reg->ac_scan_at == now)
			continue; /* credited at this launch already, by another of its ranges */
		if (!covered || !refuted(reg, now)) {
			if (covered && !reg->ac_misses++)
				reg->ac_missed_at = now; /* unconfirmed until a notification names it */
			reg->ac_scan_at = now;
			continue;
		}
		reg->ac_scan_at = 0; /* withheld: the next notification that names it credits it */
		rd->counts.withheld++;
		if (from < r)
			fresh |= ember_policy_demand_shared(pc, a, from, r, run_share(share, from, r, r0, r1), now);
		from = r + 1;
	}
	if (from < r1)
		fresh |= ember_policy_demand_shared(pc, a, from, r1, run_share(share, from, r1, r0, r1), now);
	return fresh;
}

bool ember_ac_launch(struct ember_ac_reader *rd, struct ember_policy_ctx *pc, struct ember_alloc *a, uint64_t addr,
		     uint64_t bytes, uint32_t amount, bool scanned, uint64_t now)
{
	if (!a || a->kind == EMBER_ALLOC_PLAIN || !a->nregions || addr < a->base || addr >= a->base + a->size)
		return false;
	if (!a->ac_launch || a->ac_launch_at != now) { /* a launch's ranges share its time */
		a->ac_launch++;
		a->ac_launch_at = now;
	}
	bool fresh = false;
	if (scanned) {
		/* the regions ember_monitor_demand credits */
		uint64_t end = addr + (bytes ? bytes : 1);
		if (end > a->base + a->size || end < addr)
			end = a->base + a->size;
		uint32_t r0 = (uint32_t)((addr - a->base) >> EMBER_REGION_SHIFT);
		uint32_t r1 = (uint32_t)(((end - 1 - a->base) >> EMBER_REGION_SHIFT) + 1);
		fresh = scan_demand(rd, pc, a, r0, r1, ember_policy_share(&pc->params, a, addr - a->base, bytes, amount),
				    now);
	}
	/* the counters' demand since the last launch is what this launch's promotion must see */
	unsigned slot = cover_slot(a);
	if (ember_ac_covers(rd, a, now) && rd->cover[slot].pending) {
		rd->cover[slot].pending = false;
		return true;
	}
	return fresh;
}

/* ---- the shim's reader ---- */

struct ember_ac_reader ember_shim_counters;

bool ember_counters_launch_demand(struct ember_alloc *a, uint64_t addr, uint64_t bytes, uint32_t amount,
				  uint64_t now)
{
	/* on a driver without notifications, one load: the launch path is measured in nanoseconds */
	bool fresh = ember_shim_counters.reading
			     ? ember_ac_launch(&ember_shim_counters, &ember_shim_ctx, a, addr, bytes, amount, true, now)
			     : ember_monitor_launch_demand(a, addr, bytes, amount, now);
	if (a && a->kind != EMBER_ALLOC_PLAIN && addr >= a->base)
		ember_policy_extent_edges(a, addr - a->base, bytes);
	return fresh;
}
