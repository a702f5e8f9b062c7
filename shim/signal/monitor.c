/* The access monitor's launch-scan source, and the one way demand enters the policy. */
#include "counters.h"
#include "kernels.h"
#include "launch_order.h"
#include "monitor.h"
#include "policy.h"
#include "state.h"

/*
 * 1b: a base pointer with two dimensions, rows and columns (or one, for a
 * square): a kernel of a dynamic programme or a stencil passes the array and
 * its width and indexes it row by row, so its one count is a row, not the
 * extent. When two counts multiply to most of the allocation, at some
 * element size, the kernel reads the whole allocation.
 */
static bool spans_as_rows_and_columns(const struct ember_scan *s, uint64_t size)
{
	static const unsigned sizes[] = { 8, 4, 2, 1 };
	for (unsigned i = 0; i < s->nscalars; i++)
		for (unsigned j = i; j < s->nscalars; j++) {
			uint64_t cells; /* at most size, an allocation below 2^48: cells * 8 cannot overflow */
			if (s->scalars[i] < 2 || s->scalars[j] < 2 ||
			    __builtin_mul_overflow(s->scalars[i], s->scalars[j], &cells) || cells > size)
				continue;
			for (unsigned e = 0; e < sizeof sizes / sizeof sizes[0]; e++)
				if (cells * sizes[e] <= size && 2 * cells * sizes[e] >= size)
					return true;
		}
	return false;
}

/*
 * Whether earlier launches of this kernel passed argument param pointing
 * inside an allocation: the kernel takes pieces of pools, and its piece at
 * a pool's base is no more the whole pool than the others are. llama.cpp's
 * weights are one 25.7 GB buffer whose first tensor is the output norm:
 * taken for the whole buffer, its launch credited every region of the
 * model once a token (the H200's trace of ab-32).
 */
static bool takes_pieces(const struct ember_scan *s, unsigned param)
{
	return param < EMBER_SCAN_LEARNED && (s->inside >> param & 1);
}

/*
 * Under EMBER_PIECES, where a launch passed a pointer into an allocation's
 * interior: a piece of a pool begins there (a tensor in llama.cpp's weights
 * buffer). Each region keeps the lowest such offset in it, plus one, and
 * the regions before it up to the one before them where a piece begins
 * learn it is their next (next_piece), so that finding it is one look,
 * not a walk through the extent at every launch.
 */
static void note_piece(struct ember_alloc *a, uint64_t addr)
{
	if (!ember_shim_ctx.params.pieces || a->kind == EMBER_ALLOC_PLAIN || addr <= a->base ||
	    addr >= a->base + a->size)
		return;
	uint64_t off = addr - a->base;
	uint32_t p = (uint32_t)(off >> EMBER_REGION_SHIFT);
	struct ember_region *reg = &a->regions[p];
	uint32_t at = (uint32_t)(off & (EMBER_REGION_BYTES - 1)) + 1;
	bool first = !reg->piece_at;
	if (first || at < reg->piece_at)
		reg->piece_at = at;
	for (uint32_t r = p; first && r-- > 0;) {
		if (a->regions[r].next_piece && a->regions[r].next_piece - 1 < p)
			break; /* it, and every region before it, knows a nearer one */
		a->regions[r].next_piece = p + 1;
	}
}

/*
 * The extent from addr of a pointer that a kernel's name declares as no
 * type the scan knows (in a structure, or void *), its element size a
 * guess: under EMBER_PIECES it ends where the next piece that a launch
 * began starts, in a region past addr's. llama.cpp's fused gate-and-up
 * product passes the gate tensor in a structure, with no type and no count
 * of its own; four bytes an element took it through the up tensor behind
 * it to the launch's next pointer, so up was credited twice a token
 * (ab-40's trace of call 6). A C kernel's pointers, which no name
 * declares, keep their guess: a window's count on a float * is its extent,
 * though the next window begins inside it.
 */
static uint64_t before_next_piece(const struct ember_scan *s, const struct ember_alloc *a, uint64_t addr,
				  uint64_t extent)
{
	if (!ember_shim_ctx.params.pieces || !s->declared.signature)
		return extent;
	uint64_t off = addr - a->base, end = off + extent;
	uint32_t next = a->regions[off >> EMBER_REGION_SHIFT].next_piece;
	if (!next)
		return extent;
	uint64_t at = ((uint64_t)(next - 1) << EMBER_REGION_SHIFT) + a->regions[next - 1].piece_at - 1;
	return at < end ? at - off : extent;
}

uint64_t ember_monitor_extent(const struct ember_scan *s, unsigned i, unsigned *learned)
{
	*learned = 0;
	const struct ember_alloc *a = s->ptrs[i].alloc;
	uint64_t addr = s->ptrs[i].addr, limit = a->base + a->size - addr;
	if (s->ptrs[i].bytes) /* a tensor list's chunks (tensor_lists.h) */
		return s->ptrs[i].bytes < limit ? s->ptrs[i].bytes : limit;
	for (unsigned j = 0; j < s->nptrs; j++)
		if (s->ptrs[j].alloc == a && s->ptrs[j].addr > addr && s->ptrs[j].addr - addr < limit)
			limit = s->ptrs[j].addr - addr;
	/*
	 * 1: a base pointer with a count that spans the whole allocation, at
	 * any element size: scalars and vectors, or records up to 128 bytes
	 * (k-means' 16-float points, a particle's position and velocity)
	 */
	static const unsigned sizes[] = { 16, 8, 4, 2, 1 }, records[] = { 128, 64, 32, 16, 8, 4, 2, 1 };
	unsigned param = s->ptrs[i].param;
	if (addr == a->base && limit == a->size) {
		for (unsigned k = 0; k < s->nscalars; k++)
			for (unsigned e = 0; e < sizeof records / sizeof records[0]; e++)
				if (s->scalars[k] * records[e] == limit) {
					*learned = records[e];
					return limit;
				}
		if (spans_as_rows_and_columns(s, limit))
			return limit;
		/*
		 * 1c: this kernel never showed its element size, and even at 16
		 * bytes an element its largest count covers under 1/64 of the
		 * array: a frontier's length, a level, a seed, not an extent.
		 * Nothing bounds what it reads, and a graph kernel reads all
		 * over the array, so credit the whole allocation: an unread tail
		 * credited costs a little budget, a read one missed costs a
		 * collapse to the mapped tier's sparse rate. A larger count is
		 * taken as a window (rule 2).
		 */
		uint64_t largest = 0;
		for (unsigned k = 0; k < s->nscalars; k++)
			if (s->scalars[k] > largest)
				largest = s->scalars[k];
		if ((param >= EMBER_SCAN_LEARNED || !s->elem_size[param]) && !takes_pieces(s, param) &&
		    largest < limit / 64 / 16)
			return limit;
	}
	/*
	 * 2: the element size an earlier launch of this kernel showed, else
	 * the one its name declares (kernel_types.h), else 4 bytes (float, int)
	 */
	unsigned elem = 0;
	if (param < EMBER_SCAN_LEARNED && s->elem_size[param])
		elem = s->elem_size[param];
	else if (param < EMBER_SCAN_LEARNED && s->declared.elem_size[param])
		elem = s->declared.elem_size[param];
	bool guessed = !elem;
	elem = guessed ? 4 : elem;
	uint64_t best = 0;
	for (unsigned k = 0; k < s->nscalars; k++)
		if (s->scalars[k] * elem <= limit && s->scalars[k] * elem > best)
			best = s->scalars[k] * elem;
	if (best)
		return guessed ? before_next_piece(s, a, addr, best) : best;
	/* 3: else the largest count that fits at any element size */
	for (unsigned k = 0; k < s->nscalars; k++)
		for (unsigned e = 0; e < sizeof sizes / sizeof sizes[0]; e++) {
			uint64_t len = s->scalars[k] * sizes[e];
			if (len <= limit && len > best)
				best = len;
		}
	best = best ? best : limit;
	return guessed ? before_next_piece(s, a, addr, best) : best;
}

/* The regions [*r0, returned) of a that bytes at addr cover, clipped to a; none (0) where addr is not in it. */
static uint32_t span_of(const struct ember_alloc *a, uint64_t addr, uint64_t bytes, uint32_t *r0)
{
	*r0 = 0;
	if (a->kind == EMBER_ALLOC_PLAIN || a->nregions == 0 || addr < a->base || addr >= a->base + a->size)
		return 0;
	uint64_t end = addr + (bytes ? bytes : 1);
	if (end > a->base + a->size)
		end = a->base + a->size;
	*r0 = (uint32_t)((addr - a->base) >> EMBER_REGION_SHIFT);
	return (uint32_t)(((end - 1 - a->base) >> EMBER_REGION_SHIFT) + 1);
}

bool ember_monitor_demand(struct ember_alloc *a, uint64_t addr, uint64_t bytes, uint32_t amount, uint64_t now)
{
	uint32_t r0, r1 = span_of(a, addr, bytes, &r0);
	return r1 && ember_policy_demand(&ember_shim_ctx, a, r0, r1, amount, now);
}

bool ember_monitor_launch_demand(struct ember_alloc *a, uint64_t addr, uint64_t bytes, uint32_t amount, uint64_t now)
{
	uint32_t r0, r1 = span_of(a, addr, bytes, &r0);
	return r1 && ember_policy_demand_shared(&ember_shim_ctx, a, r0, r1,
						ember_policy_share(&ember_shim_ctx.params, a, addr - a->base, bytes,
								   amount),
						now);
}

bool ember_monitor_follows(const struct ember_scan *s, unsigned i)
{
	for (unsigned j = 0; j < s->nptrs; j++)
		if (j != i && s->ptrs[j].param == s->ptrs[i].param)
			return false; /* a structure with several pointers: which moved is unknowable */
	return s->ptrs[i].param < EMBER_SCAN_LEARNED;
}

/* Launch order, per stream (launch_order.h): keep this launch's range, and depart what it slid past. */
static void note_departures(struct ember_scan *s, unsigned i, uint64_t extent)
{
	if (!ember_monitor_follows(s, i) || !extent)
		return;
	struct ember_alloc *a = s->ptrs[i].alloc;
	unsigned param = s->ptrs[i].param;
	struct ember_range now_r = { .alloc_id = a->id, .start = s->ptrs[i].addr - a->base, .end = s->ptrs[i].addr - a->base + extent };
	s->range[param] = now_r;
	s->newly_ranged |= 1u << param;
	if (s->prev_known & (1u << param))
		ember_launch_order_slide(a, &s->prev[param], &now_r);
}

/*
 * Each pointer's extent as demand, its regions credited by how much smaller
 * it is than the launch's largest (ember_policy_launch_amount). On the H200
 * at 1.5x of the budget, the star queries' 14 MB dimension tables, looked
 * up at random for each of 714 million fact rows, were credited like one
 * region of a 2.9 GB fact column (5.4 s against a bound of 0.9 s). With
 * this they are hotter, but six of them still stayed mapped there at
 * 245f287 (5.1 s): first referenced once the budget is full, by launches
 * issued together, no resident region was old enough to give way (the
 * report's note). Access counters, where the driver delivers them, stand
 * in for this guess for mapped regions (counters.c).
 */
static void credit_extents(struct ember_scan *s, uint64_t now)
{
	uint32_t regions[EMBER_SCAN_MAX_PTRS], largest = 0;
	for (unsigned i = 0; i < s->nptrs; i++) {
		uint32_t r0;
		regions[i] = span_of(s->ptrs[i].alloc, s->ptrs[i].addr, s->extent[i], &r0) - r0;
		largest = regions[i] > largest ? regions[i] : largest;
	}
	s->fresh_demand = false;
	for (unsigned i = 0; i < s->nptrs; i++)
		s->fresh_demand |= ember_counters_launch_demand(s->ptrs[i].alloc, s->ptrs[i].addr, s->extent[i],
								ember_policy_launch_amount(regions[i], largest), now);
}

void ember_monitor_launch(struct ember_scan *s, uint64_t now)
{
	unsigned learned[EMBER_SCAN_MAX_PTRS];
	/* departures first: a region that another pointer of this launch covers is referenced again below */
	s->prev_known = s->nptrs ? ember_kernel_previous_ranges(s->f, s->stream_key, s->prev) : 0;
	for (unsigned i = 0; i < s->nptrs; i++) {
		s->extent[i] = ember_monitor_extent(s, i, &learned[i]);
		note_departures(s, i, s->extent[i]);
	}
	credit_extents(s, now);
	for (unsigned i = 0; i < s->nptrs; i++) {
		unsigned param = s->ptrs[i].param;
		if (learned[i] && param < EMBER_SCAN_LEARNED && s->elem_size[param] != learned[i]) {
			s->elem_size[param] = (uint8_t)learned[i];
			s->newly_learned |= 1u << param; /* kept by ember_monitor_learn */
		}
		note_piece(s->ptrs[i].alloc, s->ptrs[i].addr);
		if (param < EMBER_SCAN_LEARNED && s->ptrs[i].addr != s->ptrs[i].alloc->base && !takes_pieces(s, param)) {
			s->inside |= 1u << param;
			s->newly_inside |= 1u << param; /* kept by ember_monitor_learn */
		}
	}
}

void ember_monitor_repeat(struct ember_scan *s, uint64_t now)
{
	s->newly_learned = s->newly_ranged = s->newly_inside = 0; /* nothing new to keep: the launch repeated keeps it already */
	credit_extents(s, now);
}

void ember_monitor_learn(const struct ember_scan *s)
{
	if (s->newly_ranged)
		ember_kernel_remember_ranges(s->f, s->stream_key, s->range, s->newly_ranged);
	for (unsigned param = 0; s->newly_learned >> param; param++)
		if (s->newly_learned & (1u << param))
			ember_kernel_learn(s->f, param, s->elem_size[param]);
	if (s->newly_inside)
		ember_kernel_learn_inside(s->f, s->newly_inside);
}
