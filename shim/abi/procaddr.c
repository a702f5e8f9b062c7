/*
 * cuGetProcAddress and cuGetProcAddress_v2.
 *
 * The driver answers first, so the result code, symbolStatus and every
 * pointer Ember does not rewrite are exactly the driver's. When the answer
 * is an export listed in hooks.def (chosen by the same version and
 * per-thread-stream rules the headers encode), Ember's function replaces
 * the driver's. This covers cuGetProcAddress itself at 11030 and 12000,
 * which is how libcudart reaches every other entry point.
 */
#include <cuda.h>

#include "shim.h"

static void *const hook_fns[EMBER_SLOT_COUNT] = {
#define EMBER_HOOK(name) [EMBER_SLOT_##name] = (void *)name,
#include "hooks.def"
#undef EMBER_HOOK
};

/* The driver's answer at the newest version Ember's headers describe. */
static void *driver_answer_at_known_version(const char *symbol, cuuint64_t flags)
{
	void *p = NULL;
	CUdriverProcAddressQueryResult status;
	if (EMBER_REAL(cuGetProcAddress_v2)(symbol, &p, CUDA_VERSION, flags, &status) != CUDA_SUCCESS)
		return NULL;
	return p;
}

static void rewrite(const char *symbol, void **pfn, int cuda_version, cuuint64_t flags)
{
	int slot;
	if (!ember_active || ember_api_lookup(symbol, cuda_version, flags, &slot) != EMBER_LOOKUP_FOUND)
		return;
	void *hook = hook_fns[slot];
	if (!hook)
		return;
	/*
	 * Past the headers' version, a newer driver may hand out a newer ABI
	 * under the same name. Rewrite only if the driver gives the same entry
	 * point as at the version Ember was built for.
	 */
	if (cuda_version > CUDA_VERSION && driver_answer_at_known_version(symbol, flags) != *pfn) {
		ember_debug("%s at version %d is newer than Ember's headers (%d); passing it through",
			    symbol, cuda_version, CUDA_VERSION);
		return;
	}
	*pfn = hook;
}

EMBER_PUBLIC CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
					       cuuint64_t flags)
{
	CUresult r = EMBER_REAL(cuGetProcAddress)(symbol, pfn, cudaVersion, flags);
	if (r == CUDA_SUCCESS && pfn && *pfn)
		rewrite(symbol, pfn, cudaVersion, flags);
	return r;
}

EMBER_PUBLIC CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
						  cuuint64_t flags,
						  CUdriverProcAddressQueryResult *symbolStatus)
{
	CUresult r = EMBER_REAL(cuGetProcAddress_v2)(symbol, pfn, cudaVersion, flags, symbolStatus);
	if (r == CUDA_SUCCESS && pfn && *pfn)
		rewrite(symbol, pfn, cudaVersion, flags);
	return r;
}
