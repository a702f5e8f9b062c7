/* Costs of reads and transfers on each tier, in nanoseconds. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "variant.h"

/* GB/s is bytes per ns. */
static double at(uint64_t bytes, double gbps) { return (double)bytes / gbps; }

double sim_promote_cost(const struct sim_profile *p, uint64_t bytes, uint64_t calls)
{
	return at(bytes, p->promote_gbps) + (double)calls * p->promote_call_us * 1e3;
}

double sim_demote_cost(const struct sim_profile *p, uint64_t bytes, uint64_t calls)
{
	return at(bytes, p->demote_gbps) + (double)calls * p->demote_call_us * 1e3;
}

double sim_advise_cost(const struct sim_profile *p, uint64_t bytes, uint64_t calls)
{
	return (double)bytes / SIM_GIB * p->advise_ms_per_gib * 1e6 + (double)calls * p->advise_call_us * 1e3;
}

double sim_read_cost(const struct sim_profile *p, enum sim_tier t, uint64_t bytes, uint64_t touched, enum sim_pattern pat)
{
	if (t == SIM_TIER_FAULT) {
		/* Stateless estimate: fault in what is touched (whole pages), then
		 * read it resident. Stock UVM keeps state and does better than this. */
		uint64_t pages = (bytes + SIM_PAGE - 1) / SIM_PAGE;
		uint64_t mig = pat == SIM_STREAM ? pages * SIM_PAGE : touched < bytes ? touched : bytes;
		double events = pat == SIM_STREAM ? (double)bytes / SIM_SMALL_PAGE : (double)touched / SIM_RANDOM_ELEM;
		double batches = ceil(events / p->fault_batch_pages);
		return batches * p->fault_batch_us * 1e3 + at(mig, p->fault_migrate_gbps) +
		       sim_read_cost(p, SIM_TIER_DEVICE, bytes, touched, pat);
	}
	/*
	 * A peer GPU's memory (the peer tier): its bandwidth terms at the peer
	 * link's rate, its latency terms (small reads, per-block latency,
	 * pieces) as mapped host memory's: nothing measured says better.
	 */
	bool dev = t == SIM_TIER_DEVICE;
	double gbps = dev ? p->device_read_gbps : t == SIM_TIER_PEER ? p->peer_read_gbps : p->mapped_read_gbps;
	double rps = dev ? p->resident_sparse_reads_per_s : p->mapped_sparse_reads_per_s;
	double stream = at(touched, gbps);
	switch (pat) {
	case SIM_STREAM:
		return at(bytes, gbps);
	case SIM_STRIDED: /* bound by bandwidth or by small transactions, whichever is worse */
		return fmax(stream, (double)touched / SIM_STRIDED_ELEM / rps * 1e9);
	case SIM_RANDOM:
		return fmax(stream, (double)touched / SIM_RANDOM_ELEM / rps * 1e9);
	case SIM_PIECES:
		return at(touched, dev ? p->resident_piece_gbps : p->mapped_piece_gbps);
	case SIM_SPARSE: /* latency per touched block dominates: the wavefront figure */
		return (double)touched / SIM_RANDOM_ELEM / rps * 1e9 +
		       (touched ? (dev ? p->resident_sparse_block_us : p->mapped_sparse_block_us) * 1e3 : 0);
	}
	return stream;
}

bool sim_grow_to(void *array, uint64_t *n, uint64_t index, size_t elem)
{
	if (index < *n)
		return true;
	uint64_t want = *n ? *n : 16;
	while (want <= index)
		want *= 2;
	char *p = realloc(*(void **)array, want * elem);
	if (!p)
		return false;
	memset(p + *n * elem, 0, (want - *n) * elem);
	*(void **)array = p;
	*n = want;
	return true;
}

int sim_parse_size(const char *s, uint64_t *out)
{
	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		return -1;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v < 0)
		return -1;
	double mul = 1;
	switch (toupper((unsigned char)*end)) {
	case 'K': mul = 1024.0; end++; break;
	case 'M': mul = 1024.0 * 1024; end++; break;
	case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
	case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
	case 0: break;
	default: return -1;
	}
	if (*end == 'i' || *end == 'I') /* "24GiB" reads as well as "24G" */
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	double b = v * mul;
	if (b >= 18e18)
		return -1;
	*out = (uint64_t)llround(b);
	return 0;
}

void sim_format_size(uint64_t b, char *buf, size_t len)
{
	static const char suf[] = "KMGT";
	if (b < 1024) {
		snprintf(buf, len, "%llu", (unsigned long long)b);
		return;
	}
	double v = (double)b;
	int i = -1;
	while (v >= 1024 && i < 3) {
		v /= 1024;
		i++;
	}
	snprintf(buf, len, "%.4g%c", v, suf[i]);
}
