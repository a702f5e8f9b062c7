/* Preparing and finishing moves: the only place region states leave flight. */
#include <stdlib.h>

#include "grow.h"
#include "moves.h"
#include "policy.h"

bool ember_moves_push(struct ember_moves *m, struct ember_alloc *a, uint32_t first, uint32_t count, bool promote)
{
	if (!ember_grow(&m->v, m->n, &m->cap, sizeof *m->v, 16))
		return false;
	m->v[m->n++] = (struct ember_move){ .alloc = a, .first = first, .count = count, .promote = promote };
	for (uint32_t r = first; r < first + count; r++) {
		a->charged += a->regions[r].state == EMBER_REGION_MAPPED;
		a->regions[r].state = promote ? EMBER_REGION_PROMOTING : EMBER_REGION_DEMOTING;
	}
	a->refs++;
	a->in_flight += count;
	return true;
}

void ember_moves_push_refresh(struct ember_moves *m, struct ember_alloc *a)
{
	for (uint32_t r = 0; r < a->nregions;) {
		uint32_t end = ember_run_end(a, r, EMBER_REGION_RESIDENT);
		if (end == r) {
			r++;
			continue;
		}
		if (!ember_moves_push(m, a, r, end - r, true))
			break;
		m->v[m->n - 1].refresh = true;
		r = end;
	}
}

void ember_moves_free(struct ember_moves *m)
{
	free(m->v);
	*m = (struct ember_moves){ 0 };
}

uint64_t ember_move_bytes(const struct ember_move *m)
{
	return ember_span_bytes(m->alloc, m->first, m->count);
}

void ember_move_finish(struct ember_policy_ctx *pc, const struct ember_move *m, bool ok, uint64_t ns, uint64_t now)
{
	struct ember_alloc *a = m->alloc;
	uint64_t bytes = ember_move_bytes(m);
	ember_table_lock(pc->table);
	struct ember_device_account *acc = ember_table_account(pc->table, a->device);
	if (m->refresh) {
		/* resident before, resident after: a failed prefetch leaves pages where they were */
		for (uint32_t r = m->first; r < m->first + m->count; r++)
			a->regions[r].state = EMBER_REGION_RESIDENT;
		a->in_flight -= m->count;
		if (ok) {
			a->stats.refreshes++;
			a->stats.bytes_refreshed += bytes;
			if (acc) {
				acc->refreshes++;
				acc->bytes_refreshed += bytes;
			}
		}
		ember_table_unlock(pc->table);
		ember_alloc_put(pc->table, a);
		return;
	}
	enum ember_region_state after = m->promote == ok ? EMBER_REGION_RESIDENT : EMBER_REGION_MAPPED;
	/* a released demotion's bytes left the account when it was issued: a failure brings them back */
	uint64_t released = 0;
	for (uint32_t r = m->first; r < m->first + m->count; r++) {
		a->charged -= after == EMBER_REGION_MAPPED && a->regions[r].state != EMBER_REGION_MAPPED;
		a->regions[r].state = after;
		if (a->regions[r].released)
			released += ember_region_bytes(a, r);
		a->regions[r].released = 0;
	}
	a->in_flight -= m->count;
	if (pc->adaptive)
		ember_policy_moved(pc, a, m->first, m->count, m->promote, ok, now);
	if (!a->freed && acc && after == EMBER_REGION_MAPPED)
		ember_budget_release(acc, bytes - released);
	else if (!a->freed && acc && released)
		ember_budget_reserve(acc, released);
	if (ok) {
		++*(m->promote ? &a->stats.promotions : &a->stats.demotions);
		*(m->promote ? &a->stats.bytes_promoted : &a->stats.bytes_demoted) += bytes;
		a->stats.migrate_ns += ns;
		if (acc)
			ember_budget_moved(acc, m->promote, bytes, ns);
	}
	ember_table_unlock(pc->table);
	ember_alloc_put(pc->table, a);
}

uint64_t ember_regions_displaced(struct ember_policy_ctx *pc, struct ember_alloc *a, uint32_t r0, uint32_t r1)
{
	struct ember_device_account *acc = ember_table_account(pc->table, a->device);
	uint64_t bytes = 0;
	for (uint32_t r = r0; r < r1 && r < a->nregions && !a->freed; r++) {
		struct ember_region *reg = &a->regions[r];
		if (reg->state != EMBER_REGION_RESIDENT || reg->hinted)
			continue;
		reg->state = EMBER_REGION_MAPPED;
		a->charged--;
		bytes += ember_region_bytes(a, r);
	}
	if (acc && bytes)
		ember_budget_release(acc, bytes);
	a->stats.bytes_displaced += bytes;
	return bytes;
}

