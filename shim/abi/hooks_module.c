/*
 * Module and library unloads: the driver may hand a later kernel the
 * handle of an unloaded one, so the kernel table forgets the unloaded
 * kernels' layouts and what launches taught of them. A module's kernels
 * are known by cuFuncGetModule, so the others' stay (a JIT that loads and
 * unloads modules beside a framework's kernels no longer makes them all be
 * learned again). A library has a module in each context, which no call
 * names from its handle, so its unload forgets every kernel: always right,
 * at one cuFuncGetParamInfo walk per kernel at its next launch.
 */
#include <cuda.h>

#include "kernels.h"
#include "shim.h"

EMBER_PUBLIC CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
	CUresult r = EMBER_REAL(cuModuleUnload)(hmod);
	if (r == CUDA_SUCCESS) {
		unsigned forgot = ember_kernels_forget_module(hmod);
		ember_debug("cuModuleUnload: %u kernels forgotten (the module's, and any whose module the driver did not name)",
			    forgot);
	}
	return r;
}

EMBER_PUBLIC CUresult CUDAAPI cuLibraryUnload(CUlibrary library)
{
	CUresult r = EMBER_REAL(cuLibraryUnload)(library);
	if (r == CUDA_SUCCESS) {
		ember_kernels_forget();
		ember_debug("cuLibraryUnload: every kernel forgotten");
	}
	return r;
}
