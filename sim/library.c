/*
 * Libraries (cuLibrary*): context-independent modules. A CUkernel is the
 * library's function handle itself, so it may be launched directly as a
 * CUfunction, as the driver allows.
 */
#include "sim.h"

static CUresult check(CUlibrary h, struct sim_module **out)
{
	SIM_REQUIRE_INIT();
	if (!sim_handle_valid(SIM_H_LIBRARY, h))
		return CUDA_ERROR_INVALID_HANDLE;
	*out = (struct sim_module *)h;
	return CUDA_SUCCESS;
}

static CUresult publish(CUlibrary *library, struct sim_module *m)
{
	sim_handle_add(SIM_H_LIBRARY, m, NULL);
	*library = (CUlibrary)m;
	return CUDA_SUCCESS;
}

/* Options change nothing the sim models; they are only checked for shape. */
static bool options_ok(unsigned n, const void *options, void *const *values)
{
	return n == 0 || (options && values);
}

SIM_EXPORT CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
					      void **jitOptionsValues, unsigned int numJitOptions,
					      CUlibraryOption *libraryOptions, void **libraryOptionValues,
					      unsigned int numLibraryOptions)
{
	SIM_REQUIRE_INIT();
	struct sim_module *m;
	if (!library || !options_ok(numJitOptions, jitOptions, jitOptionsValues) ||
	    !options_ok(numLibraryOptions, libraryOptions, libraryOptionValues))
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = sim_module_load(&m, code, NULL);
	return r != CUDA_SUCCESS ? r : publish(library, m);
}

SIM_EXPORT CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
						  CUjit_option *jitOptions, void **jitOptionsValues,
						  unsigned int numJitOptions, CUlibraryOption *libraryOptions,
						  void **libraryOptionValues, unsigned int numLibraryOptions)
{
	SIM_REQUIRE_INIT();
	struct sim_module *m;
	if (!library || !options_ok(numJitOptions, jitOptions, jitOptionsValues) ||
	    !options_ok(numLibraryOptions, libraryOptions, libraryOptionValues))
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = sim_module_load_file(&m, fileName, NULL);
	return r != CUDA_SUCCESS ? r : publish(library, m);
}

SIM_EXPORT CUresult CUDAAPI cuLibraryUnload(CUlibrary library)
{
	SIM_REQUIRE_INIT();
	if (!sim_handle_remove(SIM_H_LIBRARY, library))
		return CUDA_ERROR_INVALID_HANDLE;
	sim_module_destroy(library);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
	struct sim_module *m;
	struct sim_func *f;
	CUresult r = check(library, &m);
	if (r == CUDA_SUCCESS)
		r = pKernel ? sim_module_get_function(&f, m, name) : CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*pKernel = (CUkernel)f;
	return r;
}

SIM_EXPORT CUresult CUDAAPI cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
	struct sim_module *m;
	CUresult r = check(lib, &m);
	if (r == CUDA_SUCCESS && !count)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*count = sim_module_function_count(m);
	return r;
}

/* The kernel's function in the current context: the same handle. */
SIM_EXPORT CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	struct sim_ctx *ctx;
	struct sim_func *f;
	CUresult r = sim_current_ctx(&ctx);
	if (r == CUDA_SUCCESS)
		r = sim_func_check(kernel, &f);
	if (r == CUDA_SUCCESS && !pFunc)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*pFunc = (CUfunction)f;
	return r;
}
