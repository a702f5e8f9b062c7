/*
 * Primary contexts: one per device, reference counted. The struct never
 * moves, so its handle stays the same across release and retain; between
 * the last release and the next retain it is inactive and owns nothing.
 */
#include "sim.h"

static struct sim_ctx primaries[SIM_MAX_DEVICES];
static bool registered[SIM_MAX_DEVICES];

/* Called with sim_ctx_lock held. */
static void deactivate(struct sim_ctx *p)
{
	__atomic_store_n(&p->active, false, __ATOMIC_RELEASE);
	p->refcount = 0;
	sim_ctx_release_resources(p);
}

SIM_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	SIM_REQUIRE_INIT();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	struct sim_ctx *p = &primaries[dev];
	pthread_mutex_lock(&sim_ctx_lock);
	if (!registered[dev]) {
		sim_handle_add(SIM_H_CTX, p, NULL);
		registered[dev] = true;
	}
	if (p->refcount++ == 0) {
		sim_ctx_init(p, dev, p->flags, true);
		__atomic_store_n(&p->active, true, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&sim_ctx_lock);
	*pctx = (CUcontext)p;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	SIM_REQUIRE_INIT();
	if (!sim_device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	struct sim_ctx *p = &primaries[dev];
	CUresult r = CUDA_SUCCESS;
	pthread_mutex_lock(&sim_ctx_lock);
	if (p->refcount == 0)
		r = CUDA_ERROR_INVALID_CONTEXT;
	else if (--p->refcount == 0)
		deactivate(p);
	pthread_mutex_unlock(&sim_ctx_lock);
	return r;
}

SIM_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
	SIM_REQUIRE_INIT();
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&sim_ctx_lock);
	*flags = primaries[dev].flags;
	*active = primaries[dev].active;
	pthread_mutex_unlock(&sim_ctx_lock);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
	SIM_REQUIRE_INIT();
	if (!sim_device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!sim_ctx_flags_valid(flags))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_ctx_lock);
	primaries[dev].flags = flags;
	pthread_mutex_unlock(&sim_ctx_lock);
	return CUDA_SUCCESS;
}

/* Frees everything the primary context owns and forgets its flags, whoever holds it. */
SIM_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	SIM_REQUIRE_INIT();
	if (!sim_device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&sim_ctx_lock);
	struct sim_ctx *p = &primaries[dev];
	if (p->active)
		deactivate(p);
	p->flags = 0;
	pthread_mutex_unlock(&sim_ctx_lock);
	return CUDA_SUCCESS;
}

/* The first forms, which cuGetProcAddress answers below CUDA 11.0: the same here. */
SIM_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
	return cuDevicePrimaryCtxRelease_v2(dev);
}

SIM_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev)
{
	return cuDevicePrimaryCtxReset_v2(dev);
}
