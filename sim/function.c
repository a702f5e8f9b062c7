/* What a kernel looks like from outside: its parameters and attributes. */
#include "sim.h"

/* An H200 kernel of modest size: no static shared memory, 32 registers. */
static const struct {
	CUfunction_attribute attr;
	int value;
} attributes[] = {
	{ CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024 },
	{ CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, 0 },
	{ CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, 0 },
	{ CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, 0 },
	{ CU_FUNC_ATTRIBUTE_NUM_REGS, 32 },
	{ CU_FUNC_ATTRIBUTE_PTX_VERSION, 90 },
	{ CU_FUNC_ATTRIBUTE_BINARY_VERSION, 90 },
	{ CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, 0 },
	{ CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 49152 },
	{ CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, -1 },
	{ CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, 0 },
	{ CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 0 },
	{ CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, 0 },
	{ CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, 0 },
	{ CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 0 },
	{ CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, 0 },
};

CUresult sim_func_check(void *h, struct sim_func **out)
{
	SIM_REQUIRE_INIT();
	if (!sim_handle_valid(SIM_H_FUNC, h))
		return CUDA_ERROR_INVALID_HANDLE;
	*out = (struct sim_func *)h;
	return CUDA_SUCCESS;
}

static CUresult param_info(void *h, size_t index, size_t *offset, size_t *size)
{
	struct sim_func *f;
	CUresult r = sim_func_check(h, &f);
	if (r != CUDA_SUCCESS)
		return r;
	if (!offset || index >= f->kernel->nparams)
		return CUDA_ERROR_INVALID_VALUE;
	*offset = f->kernel->offsets[index];
	if (size)
		*size = f->kernel->sizes[index];
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset,
					       size_t *paramSize)
{
	return param_info(func, paramIndex, paramOffset, paramSize);
}

SIM_EXPORT CUresult CUDAAPI cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset,
						 size_t *paramSize)
{
	return param_info(kernel, paramIndex, paramOffset, paramSize);
}

SIM_EXPORT CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
	struct sim_func *f;
	CUresult r = sim_func_check(hfunc, &f);
	if (r != CUDA_SUCCESS)
		return r;
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof attributes / sizeof attributes[0]; i++) {
		if (attributes[i].attr == attrib) {
			*pi = attributes[i].value;
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_INVALID_VALUE;
}

SIM_EXPORT CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction hfunc)
{
	struct sim_func *f;
	CUresult r = sim_func_check(hfunc, &f);
	if (r != CUDA_SUCCESS)
		return r;
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	*name = f->kernel->name;
	return CUDA_SUCCESS;
}

/* A kernel of a library is its function here (library.c), as for cuKernelGetParamInfo. */
SIM_EXPORT CUresult CUDAAPI cuKernelGetName(const char **name, CUkernel hfunc)
{
	return cuFuncGetName(name, (CUfunction)hfunc);
}

/*
 * A module's function gives its module. A library's kernel is its own
 * function here (library.c), so it is answered as the driver answers a
 * CUkernel handle, with no module; the driver's gives the library's module
 * in the current context, which no handle of the program's names.
 */
SIM_EXPORT CUresult CUDAAPI cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
	struct sim_func *f;
	CUresult r = sim_func_check(hfunc, &f);
	if (r != CUDA_SUCCESS)
		return r;
	if (!hmod)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_handle_valid(SIM_H_MODULE, f->mod))
		return CUDA_ERROR_INVALID_HANDLE;
	*hmod = (CUmodule)f->mod;
	return CUDA_SUCCESS;
}
