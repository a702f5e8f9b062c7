/*
 * Module and library unloads: the driver may hand a later kernel the
 * handle of an unloaded one, so the kernel table forgets every layout and
 * what launches taught. Forgetting all of them is always right, and costs
 * one cuFuncGetParamInfo walk per kernel at its next launch.
 */
#include <cuda.h>

#include "kernels.h"
#include "shim.h"

EMBER_PUBLIC CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
	CUresult r = EMBER_REAL(cuModuleUnload)(hmod);
	if (r == CUDA_SUCCESS)
		ember_kernels_forget();
	return r;
}

EMBER_PUBLIC CUresult CUDAAPI cuLibraryUnload(CUlibrary library)
{
	CUresult r = EMBER_REAL(cuLibraryUnload)(library);
	if (r == CUDA_SUCCESS)
		ember_kernels_forget();
	return r;
}
