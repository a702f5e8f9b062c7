/* The allocation census: lock-free counters, read at exit. */
#include <inttypes.h>

#include "census.h"
#include "shim.h"

struct entry_count {
	uint64_t calls, bytes, converted;
};

static struct entry_count counts[EMBER_ENTRY_COUNT];

static const char *const entry_names[EMBER_ENTRY_COUNT] = {
	[EMBER_ENTRY_MANAGED] = "cuMemAllocManaged",    [EMBER_ENTRY_ALLOC] = "cuMemAlloc_v2",
	[EMBER_ENTRY_ASYNC] = "cuMemAllocAsync",        [EMBER_ENTRY_POOL] = "cuMemAllocFromPoolAsync",
	[EMBER_ENTRY_PITCH] = "cuMemAllocPitch_v2",     [EMBER_ENTRY_CREATE] = "cuMemCreate",
};

void ember_census_count(enum ember_entry entry, size_t bytes, bool converted)
{
	if ((unsigned)entry >= EMBER_ENTRY_COUNT)
		return;
	struct entry_count *c = &counts[entry];
	__atomic_fetch_add(&c->calls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->bytes, bytes, __ATOMIC_RELAXED);
	if (converted)
		__atomic_fetch_add(&c->converted, 1, __ATOMIC_RELAXED);
}

static struct entry_count snapshot(enum ember_entry e)
{
	return (struct entry_count){ __atomic_load_n(&counts[e].calls, __ATOMIC_RELAXED),
				     __atomic_load_n(&counts[e].bytes, __ATOMIC_RELAXED),
				     __atomic_load_n(&counts[e].converted, __ATOMIC_RELAXED) };
}

void ember_census_write_json(FILE *f)
{
	const char *sep = "";
	fputc('{', f);
	for (int e = 0; e < EMBER_ENTRY_COUNT; e++) {
		struct entry_count c = snapshot(e);
		if (!c.calls)
			continue;
		fprintf(f, "%s\"%s\": {\"calls\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"converted\": %" PRIu64 "}", sep,
			entry_names[e], c.calls, c.bytes, c.converted);
		sep = ", ";
	}
	fputc('}', f);
}

void ember_census_log(void)
{
	char line[512];
	size_t n = 0;
	for (int e = 0; e < EMBER_ENTRY_COUNT && n < sizeof line; e++) {
		struct entry_count c = snapshot(e);
		if (c.calls)
			n += (size_t)snprintf(line + n, sizeof line - n, "%s%s %" PRIu64 " (%.2f GiB, %" PRIu64 " converted)",
					      n ? ", " : "", entry_names[e], c.calls, c.bytes / 1073741824.0,
					      c.converted);
	}
	if (n)
		ember_info("allocations by entry point: %s", line);
}
