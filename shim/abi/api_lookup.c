/* Version resolution for cuGetProcAddress, over the generated rows. */
#include <stdlib.h>
#include <string.h>

#include "api.h"

/* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, without pulling in cuda.h */
#define PER_THREAD_FLAG 2u

const char *const ember_export_names[EMBER_SLOT_COUNT] = {
#define EMBER_EXPORT(name) #name,
#include "ember_exports.def"
#undef EMBER_EXPORT
};

static int cmp_name(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

int ember_export_slot(const char *name)
{
	const char *const *hit = bsearch(name, ember_export_names, EMBER_SLOT_COUNT,
					 sizeof *ember_export_names, cmp_name);
	return hit ? (int)(hit - ember_export_names) : -1;
}

/* Index of the first row whose base is `symbol`, or -1. */
static long first_row(const char *symbol)
{
	long lo = 0, hi = (long)ember_api_row_count;
	while (lo < hi) {
		long mid = lo + (hi - lo) / 2;
		if (strcmp(ember_api_rows[mid].base, symbol) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < (long)ember_api_row_count && strcmp(ember_api_rows[lo].base, symbol) == 0)
		return lo;
	return -1;
}

enum ember_lookup ember_api_lookup(const char *symbol, int cuda_version, uint64_t flags, int *slot)
{
	if (!symbol)
		return EMBER_LOOKUP_NOT_FOUND;
	long i = first_row(symbol);
	if (i < 0)
		return EMBER_LOOKUP_NOT_FOUND;
	/* Rows of one base: plain ones ascending, then per-thread ones ascending. */
	const struct ember_api_row *plain = NULL, *per_thread = NULL;
	for (; i < (long)ember_api_row_count && strcmp(ember_api_rows[i].base, symbol) == 0; i++) {
		const struct ember_api_row *r = &ember_api_rows[i];
		if (r->version > cuda_version)
			continue;
		if (r->per_thread)
			per_thread = r;
		else
			plain = r;
	}
	/*
	 * A per-thread row is the twin of the newest plain row at or below its
	 * own version; it answers only if no newer plain row has replaced that
	 * entry point by cuda_version.
	 */
	if ((flags & PER_THREAD_FLAG) && per_thread &&
	    (!plain || plain->version <= per_thread->version)) {
		*slot = per_thread->slot;
		return EMBER_LOOKUP_FOUND;
	}
	if (plain) {
		*slot = plain->slot;
		return EMBER_LOOKUP_FOUND;
	}
	if (per_thread) { /* only per-thread forms exist at this version */
		*slot = per_thread->slot;
		return EMBER_LOOKUP_FOUND;
	}
	return EMBER_LOOKUP_VERSION_NOT_SUFFICIENT;
}
