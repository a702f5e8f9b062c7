/* Session 51, call 5: does a primary context's reset free a cuMemCreate handle? Built by hand: gcc -I$CUDA/include -L$CUDA/lib64/stubs -lcuda. */
#include <cuda.h>
#include <stdio.h>
int main(void)
{
	CUdevice d; CUcontext c; CUmemGenericAllocationHandle h;
	cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&c, d); cuCtxSetCurrent(c);
	CUmemAllocationProp p = { 0 };
	p.type = CU_MEM_ALLOCATION_TYPE_PINNED; p.location.type = CU_MEM_LOCATION_TYPE_DEVICE; p.location.id = 0;
	size_t g = 0; cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	printf("create %d\n", (int)cuMemCreate(&h, g, &p, 0));
	size_t fr0, tot; cuMemGetInfo(&fr0, &tot);
	printf("reset %d\n", (int)cuDevicePrimaryCtxReset(d));
	cuDevicePrimaryCtxRetain(&c, d); cuCtxSetCurrent(c);
	size_t fr1; cuMemGetInfo(&fr1, &tot);
	printf("free before reset %zu after %zu (diff %lld)\n", fr0, fr1, (long long)fr1 - (long long)fr0);
	printf("release after reset %d\n", (int)cuMemRelease(h));
	return 0;
}
