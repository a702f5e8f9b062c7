/* The peer tier, its decision and its table: see peer.h. */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "peer.h"

static bool valid(int dev)
{
	return dev >= 0 && dev < EMBER_MAX_DEVICES;
}

double ember_peer_predicted_gain(const struct ember_link_rates *rates, int reader, int holder)
{
	if (!rates || !valid(reader) || !valid(holder) || reader == holder || !(rates->host_mapped_bps > 0))
		return 0;
	double peer = rates->peer_bps[reader][holder];
	return peer > 0 ? peer / rates->host_mapped_bps : 0;
}

int ember_peer_pick(const struct ember_accounts *accs, const struct ember_link_rates *rates, int reader,
		    uint64_t bytes, uint32_t usable)
{
	if (!accs || !rates || !valid(reader) || bytes == 0)
		return -1;
	const struct ember_device_account *own = &accs->dev[reader];
	if (!own->budget || ember_budget_room(own, own->high) >= bytes)
		return -1; /* room at home, or a budget not yet known: not the peer tier's case */
	int best = -1;
	double best_rate = 0;
	uint64_t best_room = 0;
	for (int g = 0; g < EMBER_MAX_DEVICES; g++) {
		if (g == reader || !(usable & (1u << g)))
			continue;
		const struct ember_device_account *acc = &accs->dev[g];
		double rate = rates->peer_bps[reader][g];
		if (!acc->budget || !(rate > rates->host_mapped_bps))
			continue;
		uint64_t room = ember_budget_room(acc, acc->low);
		if (room < bytes)
			continue;
		if (best < 0 || rate > best_rate || (rate == best_rate && room > best_room)) {
			best = g;
			best_rate = rate;
			best_room = room;
		}
	}
	return best;
}

/* ---- the peer tier in placement ---- */

void ember_peer_moves_free(struct ember_peer_moves *m)
{
	free(m->v);
	*m = (struct ember_peer_moves){ 0 };
}

uint64_t ember_peer_move_bytes(const struct ember_peer_move *m)
{
	return ember_span_bytes(m->a, m->first, m->count);
}

/* Append a move, or extend the last one when it continues it. False when out of memory. */
static bool push(struct ember_peer_moves *m, struct ember_alloc *a, uint32_t r, int to, int from, int reader)
{
	if (m->n) {
		struct ember_peer_move *last = &m->v[m->n - 1];
		if (last->a == a && last->to == to && last->from == from && last->reader == reader &&
		    (last->first + last->count == r || r + 1 == last->first)) { /* either way: push-outs walk back */
			last->first = r < last->first ? r : last->first;
			last->count++;
			return true;
		}
	}
	if (!ember_grow(&m->v, m->n, &m->cap, sizeof *m->v, 8))
		return false;
	m->v[m->n++] = (struct ember_peer_move){ a, r, 1, to, from, reader };
	return true;
}

void ember_peer_tier_reset(struct ember_peer_tier *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].holder);
		if (--t->v[i].a->refs == 0)
			free(t->v[i].a);
	}
	free(t->v);
	memset(t, 0, sizeof *t);
}

void ember_peer_set_link(struct ember_peer_tier *t, int reader, int holder, double peer_bps, double host_bps)
{
	if (!valid(reader) || !valid(holder))
		return;
	t->rates.peer_bps[reader][holder] = peer_bps > 0 ? peer_bps : 0;
	if (host_bps > 0)
		t->rates.host_mapped_bps = host_bps;
	t->known[reader] |= 1u << holder;
}

bool ember_peer_link_known(const struct ember_peer_tier *t, int reader, int holder)
{
	return valid(reader) && valid(holder) && (t->known[reader] & (1u << holder));
}

bool ember_peer_wanted(const struct ember_peer_tier *t, const struct ember_accounts *accs, int reader,
		       uint32_t usable)
{
	if (!valid(reader) || !(usable & ~(1u << reader)))
		return false;
	const struct ember_device_account *own = &accs->dev[reader];
	return own->budget && ember_budget_room(own, own->high) < EMBER_REGION_BYTES;
}

static struct ember_peer_entry *find(const struct ember_peer_tier *t, const struct ember_alloc *a)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].a == a)
			return &t->v[i];
	return NULL;
}

static struct ember_peer_entry *find_or_add(struct ember_peer_tier *t, struct ember_alloc *a, int reader)
{
	struct ember_peer_entry *e = find(t, a);
	if (e)
		return e;
	if (!ember_grow(&t->v, t->n, &t->cap, sizeof *t->v, 8))
		return NULL;
	int8_t *holder = malloc(a->nregions);
	if (!holder)
		return NULL;
	memset(holder, -1, a->nregions);
	a->refs++; /* the table is locked: the entry's reference */
	t->v[t->n] = (struct ember_peer_entry){ a, reader, holder, 0 };
	return &t->v[t->n++];
}

/* Region r of e comes off its holder's account (and the record). */
static void unlend(struct ember_peer_tier *t, struct ember_accounts *accs, struct ember_peer_entry *e, uint32_t r)
{
	int h = e->holder[r];
	uint64_t bytes = ember_region_bytes(e->a, r);
	ember_budget_release(&accs->dev[h], bytes);
	struct ember_peer_stats *s = &t->stats[h];
	s->held -= bytes < s->held ? bytes : s->held;
	e->holder[r] = -1;
	e->lent--;
}

static void lend_one(struct ember_peer_tier *t, struct ember_accounts *accs, struct ember_peer_entry *e, uint32_t r,
		     int h)
{
	uint64_t bytes = ember_region_bytes(e->a, r);
	ember_budget_reserve(&accs->dev[h], bytes);
	e->holder[r] = (int8_t)h;
	e->lent++;
	t->stats[h].held += bytes;
}

/* Drop entry i: its reference goes (the last frees the allocation, as ember_alloc_put does). */
static void drop(struct ember_peer_tier *t, size_t i)
{
	struct ember_peer_entry *e = &t->v[i];
	free(e->holder);
	if (--e->a->refs == 0)
		free(e->a);
	t->v[i] = t->v[--t->n];
}

void ember_peer_sync(struct ember_peer_tier *t, struct ember_table *table, struct ember_peer_moves *out)
{
	struct ember_accounts *accs = table->accounts;
	for (size_t i = 0; i < t->n;) {
		struct ember_peer_entry *e = &t->v[i];
		struct ember_alloc *a = e->a;
		if (a->freed || ember_table_find(table, a->base) != a) {
			/* gone without ember_peer_forget (a table reset): its holders' charges go with it */
			for (uint32_t r = 0; r < a->nregions && e->lent; r++)
				if (e->holder[r] >= 0)
					unlend(t, accs, e, r);
			drop(t, i);
			continue;
		}
		bool moved_on = a->device != e->reader; /* placed for another GPU now: not ours to lend */
		for (uint32_t r = 0; r < a->nregions && e->lent; r++) {
			int h = e->holder[r];
			if (h < 0)
				continue;
			const struct ember_region *g = &a->regions[r];
			if (g->state != EMBER_REGION_MAPPED || g->hinted) {
				unlend(t, accs, e, r); /* the policy or the application moves it now */
			} else if (moved_on) {
				if (h == a->device || !push(out, a, r, -1, h, e->reader))
					continue; /* its new GPU holds it: it stays there (its promotion finds it) */
				unlend(t, accs, e, r);
			}
		}
		if (moved_on && e->lent == 0)
			e->reader = a->device;
		i++;
	}
}

uint64_t ember_peer_lend(struct ember_peer_tier *t, struct ember_accounts *accs, int reader,
			 struct ember_alloc *const *allocs, size_t n, uint32_t usable, uint64_t now,
			 struct ember_peer_moves *out)
{
	if (!ember_peer_wanted(t, accs, reader, usable))
		return 0;
	uint32_t mask = 0;
	for (int g = 0; g < EMBER_MAX_DEVICES; g++)
		if (g != reader && (usable & (1u << g)) && ember_peer_link_known(t, reader, g) && t->quiet_until[g] <= now)
			mask |= 1u << g;
	bool room = false; /* the common steady case, cheaply: every peer's room below its low watermark taken */
	for (int g = 0; g < EMBER_MAX_DEVICES && !room; g++)
		room = (mask & (1u << g)) && accs->dev[g].budget &&
		       ember_budget_room(&accs->dev[g], accs->dev[g].low) >= EMBER_REGION_BYTES;
	if (!room)
		return 0;
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		struct ember_alloc *a = allocs[i];
		if (!a || a->kind == EMBER_ALLOC_PLAIN || a->freed || a->device != reader || !a->nregions)
			continue;
		struct ember_peer_entry *e = find(t, a);
		if (e && e->reader != reader)
			continue; /* still lent for the GPU it was placed for before: ember_peer_sync brings it back */
		for (uint32_t r = 0; r < a->nregions; r++) {
			const struct ember_region *g = &a->regions[r];
			if (g->state != EMBER_REGION_MAPPED || g->hinted || (e && e->holder[r] >= 0))
				continue;
			uint64_t bytes = ember_region_bytes(a, r);
			int h = ember_peer_pick(accs, &t->rates, reader, bytes, mask);
			if (h < 0)
				continue;
			if (!e && !(e = find_or_add(t, a, reader)))
				return total;
			if (!push(out, a, r, h, -1, reader))
				return total;
			lend_one(t, accs, e, r, h);
			t->stats[h].placed += bytes;
			t->stats[reader].borrowed += bytes;
			total += bytes;
		}
	}
	return total;
}

uint64_t ember_peer_own_need(const struct ember_peer_tier *t, int holder, struct ember_alloc *const *allocs,
			     size_t n, bool adaptive)
{
	if (!valid(holder) || !t->stats[holder].held)
		return 0;
	uint64_t need = 0;
	for (size_t i = 0; i < n; i++) {
		const struct ember_alloc *a = allocs[i];
		if (!a || a->kind == EMBER_ALLOC_PLAIN || a->freed || a->device != holder)
			continue;
		if (!adaptive && __atomic_load_n(&a->referenced, __ATOMIC_ACQUIRE))
			continue; /* static: split already, it promotes nothing more */
		for (uint32_t r = 0; r < a->nregions; r++)
			if (a->regions[r].state == EMBER_REGION_MAPPED && !a->regions[r].hinted &&
			    ember_peer_holder(t, a, r) < 0)
				need += ember_region_bytes(a, r);
	}
	return need;
}

uint64_t ember_peer_push_out(struct ember_peer_tier *t, struct ember_accounts *accs, int holder, uint64_t need,
			     uint64_t now, uint64_t quiet_ns, struct ember_peer_moves *out)
{
	if (!valid(holder) || !need || !t->stats[holder].held)
		return 0;
	struct ember_device_account *acc = &accs->dev[holder];
	if (ember_budget_room(acc, acc->high) >= need)
		return 0;
	t->quiet_until[holder] = now + quiet_ns;
	uint64_t total = 0;
	/* the last lent go first: the earlier regions of an allocation are the ones its reader reads first */
	for (size_t i = t->n; i-- > 0 && ember_budget_room(acc, acc->high) < need;) {
		struct ember_peer_entry *e = &t->v[i];
		for (uint32_t r = e->a->nregions; r-- > 0 && e->lent && ember_budget_room(acc, acc->high) < need;) {
			if (e->holder[r] != holder || !push(out, e->a, r, -1, holder, e->reader))
				continue;
			uint64_t bytes = ember_region_bytes(e->a, r);
			unlend(t, accs, e, r);
			t->stats[holder].pushed_out += bytes;
			total += bytes;
		}
	}
	return total;
}

void ember_peer_failed(struct ember_peer_tier *t, struct ember_accounts *accs, const struct ember_peer_move *m)
{
	struct ember_peer_entry *e = find(t, m->a);
	if (!e)
		return;
	for (uint32_t r = m->first; r < m->first + m->count && r < m->a->nregions; r++) {
		uint64_t bytes = ember_region_bytes(m->a, r);
		if (m->to >= 0 && e->holder[r] == m->to) {
			unlend(t, accs, e, r);
			struct ember_peer_stats *s = &t->stats[m->to];
			s->placed -= bytes < s->placed ? bytes : s->placed;
			s = &t->stats[m->reader];
			s->borrowed -= bytes < s->borrowed ? bytes : s->borrowed;
		} else if (m->to < 0 && e->holder[r] < 0 && valid(m->from) && !m->a->freed &&
			   m->a->regions[r].state == EMBER_REGION_MAPPED) {
			lend_one(t, accs, e, r, m->from); /* it never left */
			struct ember_peer_stats *s = &t->stats[m->from];
			s->pushed_out -= bytes < s->pushed_out ? bytes : s->pushed_out;
		}
	}
}

void ember_peer_forget(struct ember_peer_tier *t, struct ember_accounts *accs, struct ember_alloc *a)
{
	for (size_t i = 0; i < t->n; i++) {
		struct ember_peer_entry *e = &t->v[i];
		if (e->a != a)
			continue;
		for (uint32_t r = 0; r < a->nregions && e->lent; r++)
			if (e->holder[r] >= 0)
				unlend(t, accs, e, r);
		drop(t, i);
		return;
	}
}

uint64_t ember_peer_displaced(struct ember_peer_tier *t, struct ember_accounts *accs, struct ember_alloc *a,
			      uint32_t r0, uint32_t r1)
{
	struct ember_peer_entry *e = find(t, a);
	uint64_t bytes = 0;
	for (uint32_t r = r0; e && r < r1 && r < a->nregions && e->lent; r++)
		if (e->holder[r] >= 0) {
			bytes += ember_region_bytes(a, r);
			unlend(t, accs, e, r);
		}
	return bytes;
}

int ember_peer_holder(const struct ember_peer_tier *t, const struct ember_alloc *a, uint32_t r)
{
	const struct ember_peer_entry *e = find(t, a);
	return e && r < a->nregions ? e->holder[r] : -1;
}

/* ---- through the operations seam ---- */

bool ember_peer_seam_on(const struct ember_peer_seam *s)
{
	return s && s->ops && s->ops->peer_place && s->ops->peer_link;
}

/* Issue m's moves from at, in order; one that cannot be issued is undone. True when any was issued. Frees m. */
static bool issue(const struct ember_peer_seam *s, struct ember_peer_moves *m, const struct ember_at *at)
{
	bool any = false;
	for (size_t i = 0; i < m->n; i++) {
		const struct ember_peer_move *pm = &m->v[i];
		struct ember_op op = { .move = { .alloc = pm->a, .first = pm->first, .count = pm->count, .promote = pm->to >= 0 },
				       .at = *at };
		int r = pm->a->freed ? -1 : s->ops->peer_place(s->ops_self, &op, pm->to, pm->reader);
		if (r != 0) {
			ember_table_lock(s->table);
			ember_peer_failed(s->tier, s->table->accounts, pm);
			ember_table_unlock(s->table);
		}
		any |= r == 0;
		if (s->note)
			s->note(s->arg, pm, r);
	}
	ember_peer_moves_free(m);
	return any;
}

/* The links from reader to the GPUs of usable not yet measured, measured (without the table lock). */
static void measure(const struct ember_peer_seam *s, const struct ember_at *at, int reader, uint32_t usable)
{
	for (int g = 0; g < EMBER_MAX_DEVICES; g++) {
		if (g == reader || !(usable & (1u << g)))
			continue;
		ember_table_lock(s->table);
		bool known = ember_peer_link_known(s->tier, reader, g);
		ember_table_unlock(s->table);
		if (known)
			continue;
		double peer = 0, host = 0;
		int r = s->ops->peer_link(s->ops_self, at, reader, g, &peer, &host);
		ember_table_lock(s->table);
		bool first = !ember_peer_link_known(s->tier, reader, g);
		if (first)
			ember_peer_set_link(s->tier, reader, g, r == 0 ? peer : 0, r == 0 ? host : 0);
		ember_table_unlock(s->table);
		if (first && s->measured)
			s->measured(s->arg, reader, g, r, peer, host);
	}
}

uint64_t ember_peer_after_launch(const struct ember_peer_seam *s, const struct ember_at *at,
				 struct ember_alloc *const *allocs, size_t n, uint32_t usable)
{
	int dev = at ? at->device : -1;
	if (!ember_peer_seam_on(s) || !valid(dev) || !n || !(usable & ~(1u << dev)))
		return 0; /* one GPU: the common case, and nothing to do */
	struct ember_peer_moves moves = { 0 };
	uint64_t lent = 0;
	ember_table_lock(s->table);
	ember_peer_sync(s->tier, s->table, &moves);
	bool wanted = ember_peer_wanted(s->tier, s->table->accounts, dev, usable);
	ember_table_unlock(s->table);
	if (wanted) {
		measure(s, at, dev, usable);
		uint64_t now = s->ops->now(s->ops_self);
		ember_table_lock(s->table);
		lent = ember_peer_lend(s->tier, s->table->accounts, dev, allocs, n, usable, now, &moves);
		ember_table_unlock(s->table);
	}
	if (issue(s, &moves, at))
		s->ops->stream_wait(s->ops_self, at, EMBER_ORDER_STREAM);
	return lent;
}

uint64_t ember_peer_before_launch(const struct ember_peer_seam *s, const struct ember_at *at,
				  struct ember_alloc *const *allocs, size_t n, bool adaptive, uint64_t quiet_ns)
{
	int dev = at ? at->device : -1;
	if (!ember_peer_seam_on(s) || !valid(dev) || !n)
		return 0;
	struct ember_peer_moves moves = { 0 };
	uint64_t out = 0;
	ember_table_lock(s->table);
	if (s->tier->stats[dev].held) {
		uint64_t need = ember_peer_own_need(s->tier, dev, allocs, n, adaptive);
		out = ember_peer_push_out(s->tier, s->table->accounts, dev, need, s->ops->now(s->ops_self), quiet_ns,
					  &moves);
	}
	ember_table_unlock(s->table);
	issue(s, &moves, at); /* from the holder's launch: ahead of its own promotions */
	return out;
}
