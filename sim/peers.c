/*
 * The peer topology: which pairs of simulated GPUs have a peer link.
 * EMBER_SIM_PEERS is "all" (the default: every pair, as NVLink between
 * H200s of one host), "none", or a list of pairs of physical GPUs
 * ("0-1,2-3"). A bad entry ends the list, with one stderr line. Over a
 * link a GPU reads the other's memory at SIM_PEER_BPS and copies between
 * them run at that rate; without one, reads and copies go through host
 * memory (cost.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static bool link_of[SIM_MAX_DEVICES][SIM_MAX_DEVICES];

void sim_peers_setup(void)
{
	const char *s = getenv("EMBER_SIM_PEERS");
	bool all = !s || !*s || !strcmp(s, "all");
	for (int a = 0; a < SIM_MAX_DEVICES; a++)
		for (int b = 0; b < SIM_MAX_DEVICES; b++)
			link_of[a][b] = all && a != b;
	if (all || !strcmp(s, "none"))
		return;
	for (const char *p = s; *p;) {
		char *end;
		long a = strtol(p, &end, 10), b = -1;
		if (end != p && *end == '-') {
			const char *q = end + 1;
			b = strtol(q, &end, 10);
			if (end == q)
				b = -1;
		}
		if (a < 0 || b < 0 || a >= SIM_MAX_DEVICES || b >= SIM_MAX_DEVICES || a == b ||
		    (*end && *end != ',')) {
			fprintf(stderr, "ember-sim: EMBER_SIM_PEERS: '%.*s' is not a pair of GPUs such as 0-1; the list ends there\n",
				(int)strcspn(p, ","), p);
			return;
		}
		link_of[a][b] = link_of[b][a] = true;
		p = *end ? end + 1 : end;
	}
}

bool sim_peer_link(int dev, int peer)
{
	if (!sim_device_valid(dev) || !sim_device_valid(peer) || dev == peer)
		return false;
	return link_of[sim_globals.physical[dev]][sim_globals.physical[peer]];
}
