/* The peer tier's decision: see peer.h. */
#include <stdbool.h>
#include <stddef.h>

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
