/*
 * The driver API surface as Ember sees it: one slot per export of the
 * toolkit's stub libcuda (generated, sorted by name) and the versioned
 * (name, version, per-thread) rows that cuGetProcAddress answers from.
 * Shared by the shim and the simulated driver.
 */
#ifndef EMBER_API_H
#define EMBER_API_H

#include <stdint.h>

enum ember_slot {
#define EMBER_EXPORT(name) EMBER_SLOT_##name,
#include "ember_exports.def"
#undef EMBER_EXPORT
	EMBER_SLOT_COUNT
};

/* slot -> exported name, e.g. "cuMemAlloc_v2" */
extern const char *const ember_export_names[EMBER_SLOT_COUNT];

/* One PFN_<base>_v<version>[_ptds|_ptsz] typedef of cudaTypedefs.h. */
struct ember_api_row {
	const char *base;
	int version;
	int per_thread;
	int slot; /* the export that implements it */
};
extern const struct ember_api_row ember_api_rows[];
extern const unsigned ember_api_row_count;

/* The same values as CUdriverProcAddressQueryResult. */
enum ember_lookup {
	EMBER_LOOKUP_FOUND = 0,
	EMBER_LOOKUP_NOT_FOUND = 1,
	EMBER_LOOKUP_VERSION_NOT_SUFFICIENT = 2,
};

/*
 * Which export answers cuGetProcAddress(symbol, cuda_version, flags): the
 * newest version <= cuda_version, in its per-thread-stream form when flags
 * ask for one (CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) and one exists
 * for that version. Sets *slot only when it returns EMBER_LOOKUP_FOUND.
 */
enum ember_lookup ember_api_lookup(const char *symbol, int cuda_version, uint64_t flags, int *slot);

/* The slot of an exported name, or -1. */
int ember_export_slot(const char *name);

#endif
