/*
 * cuGetProcAddress: the generated table (shim/abi/api.h) picks which export
 * answers a (name, CUDA version, stream flags) query; the sim answers with
 * its own definition of that export, or "not found" when it has none.
 * The lookup goes through the sim's own dlopen handle, never the global
 * scope, where the shim exports the very same names.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "api.h"
#include "sim.h"

#define FLAGS_KNOWN (CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)

static pthread_once_t path_once = PTHREAD_ONCE_INIT;
static char self_path[4096];

static void find_self(void)
{
	Dl_info info;
	if (dladdr((void *)find_self, &info) && info.dli_fname)
		snprintf(self_path, sizeof self_path, "%s", info.dli_fname);
}

/* This library's definition of an exported name, or NULL. */
static void *own_export(const char *name)
{
	pthread_once(&path_once, find_self);
	void *self = *self_path ? dlopen(self_path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
	if (!self)
		return NULL;
	void *fn = dlsym(self, name);
	dlclose(self); /* NOLOAD took a reference; the library stays loaded regardless */
	return fn;
}

static CUresult get_proc_address(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
				 CUdriverProcAddressQueryResult *symbolStatus)
{
	if (!symbol || !pfn || (flags & ~(cuuint64_t)FLAGS_KNOWN))
		return CUDA_ERROR_INVALID_VALUE;
	int slot;
	enum ember_lookup found = ember_api_lookup(symbol, cudaVersion, flags, &slot);
	void *fn = found == EMBER_LOOKUP_FOUND ? own_export(ember_export_names[slot]) : NULL;
	*pfn = fn;
	if (symbolStatus) {
		if (fn)
			*symbolStatus = CU_GET_PROC_ADDRESS_SUCCESS;
		else if (found == EMBER_LOOKUP_VERSION_NOT_SUFFICIENT)
			*symbolStatus = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
		else /* unknown, or an entry point the sim does not implement */
			*symbolStatus = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	}
	return fn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

SIM_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
						CUdriverProcAddressQueryResult *symbolStatus)
{
	return get_proc_address(symbol, pfn, cudaVersion, flags, symbolStatus);
}

/* The CUDA 11.3 form, without symbolStatus. */
SIM_EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	return get_proc_address(symbol, pfn, cudaVersion, flags, NULL);
}
