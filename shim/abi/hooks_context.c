/*
 * Context teardown. The driver frees every allocation of a context it
 * destroys without a cuMemFree for each, so the host's touches in the
 * background (touch_pool.h) stop before it: a touch of a page no longer
 * mapped would fault in the pool's thread and end the program.
 */
#include <cuda.h>

#include "shim.h"
#include "touch_pool.h"

EMBER_PUBLIC CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
	ember_touch_pool_drain();
	return EMBER_REAL(cuCtxDestroy_v2)(ctx);
}

EMBER_PUBLIC CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	ember_touch_pool_drain();
	return EMBER_REAL(cuDevicePrimaryCtxReset_v2)(dev);
}

/* The last release destroys the primary context. */
EMBER_PUBLIC CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	ember_touch_pool_drain();
	return EMBER_REAL(cuDevicePrimaryCtxRelease_v2)(dev);
}
