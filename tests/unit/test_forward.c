/* Forwarded calls return exactly what the driver returns, out-parameters included. */
#include <string.h>

#include "ember_sim.h"
#include "harness.h"

static void *sim, *shim;

static void setup(void)
{
	sim = load_sim();
	shim = load_shim();
	CU_OK(SYM(shim, cuInit)(0));
}

TestSuite(forward, .init = setup);

Test(forward, device_queries_match_the_driver)
{
	int n_shim = -1, n_sim = -2;
	CU_OK(SYM(shim, cuDeviceGetCount)(&n_shim));
	CU_OK(SYM(sim, cuDeviceGetCount)(&n_sim));
	cr_expect_eq(n_shim, n_sim);

	CUdevice d;
	CU_OK(SYM(shim, cuDeviceGet)(&d, 0));
	char a[128], b[128];
	CU_OK(SYM(shim, cuDeviceGetName)(a, sizeof a, d));
	CU_OK(SYM(sim, cuDeviceGetName)(b, sizeof b, d));
	cr_expect_str_eq(a, b);

	size_t ta = 0, tb = 1;
	CU_OK(SYM(shim, cuDeviceTotalMem_v2)(&ta, d));
	CU_OK(SYM(sim, cuDeviceTotalMem_v2)(&tb, d));
	cr_expect_eq(ta, tb);

	int major = 0, minor = 0, ver = 0;
	CU_OK(SYM(shim, cuDeviceGetAttribute)(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d));
	CU_OK(SYM(shim, cuDeviceGetAttribute)(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d));
	cr_expect_eq(major * 10 + minor, 90);
	CU_OK(SYM(shim, cuDriverGetVersion)(&ver));
	cr_expect_eq(ver, 13000);
}

Test(forward, errors_come_back_unchanged)
{
	CUdevice d;
	cr_expect_eq(SYM(shim, cuDeviceGet)(&d, 999), SYM(sim, cuDeviceGet)(&d, 999));
	cr_expect_neq(SYM(shim, cuDeviceGet)(&d, 999), CUDA_SUCCESS);
	cr_expect_eq(SYM(shim, cuMemFree_v2)((CUdeviceptr)0x1234), SYM(sim, cuMemFree_v2)((CUdeviceptr)0x1234));
	const char *s_shim = NULL, *s_sim = NULL;
	CU_OK(SYM(shim, cuGetErrorString)(CUDA_ERROR_INVALID_VALUE, &s_shim));
	CU_OK(SYM(sim, cuGetErrorString)(CUDA_ERROR_INVALID_VALUE, &s_sim));
	cr_expect_eq(s_shim, s_sim, "the very same string pointer comes back");
}

Test(forward, memory_round_trips_through_the_shim)
{
	CUdevice d;
	CUcontext ctx;
	CU_OK(SYM(shim, cuDeviceGet)(&d, 0));
	CU_OK(SYM(shim, cuDevicePrimaryCtxRetain)(&ctx, d));
	CU_OK(SYM(shim, cuCtxSetCurrent)(ctx));
	CUcontext cur = NULL;
	CU_OK(SYM(sim, cuCtxGetCurrent)(&cur));
	cr_expect_eq(cur, ctx, "the shim's context is the driver's context");

	size_t free_before, total;
	CU_OK(SYM(shim, cuMemGetInfo_v2)(&free_before, &total));
	CUdeviceptr p;
	enum { N = 1 << 20 };
	CU_OK(SYM(shim, cuMemAlloc_v2)(&p, N));
	size_t free_after, total2;
	CU_OK(SYM(sim, cuMemGetInfo_v2)(&free_after, &total2));
	cr_expect_eq(total, total2);
	cr_expect_leq(free_after + N, free_before);

	static unsigned char in[N], out[N];
	for (size_t i = 0; i < N; i++)
		in[i] = (unsigned char)(i * 131 + 7);
	CU_OK(SYM(shim, cuMemcpyHtoD_v2)(p, in, N));
	CU_OK(SYM(sim, cuMemcpyDtoH_v2)(out, p, N));
	cr_expect_eq(memcmp(in, out, N), 0);
	CU_OK(SYM(shim, cuMemsetD8_v2)(p, 0xab, N));
	CU_OK(SYM(shim, cuMemcpyDtoH_v2)(out, p, N));
	cr_expect_eq(out[0], 0xab);
	cr_expect_eq(out[N - 1], 0xab);
	CU_OK(SYM(shim, cuMemFree_v2)(p));
}

Test(forward, export_table_passes_through)
{
	const void *from_shim = NULL, *from_sim = NULL;
	CUuuid id;
	memcpy(id.bytes, EMBER_SIM_TEST_EXPORT_UUID, sizeof id.bytes);
	CU_OK(SYM(shim, cuGetExportTable)(&from_shim, &id));
	CU_OK(SYM(sim, cuGetExportTable)(&from_sim, &id));
	cr_expect_not_null(from_shim);
	cr_expect_eq(from_shim, from_sim);
	CUuuid other = { { 0 } };
	cr_expect_eq(SYM(shim, cuGetExportTable)(&from_shim, &other),
		     SYM(sim, cuGetExportTable)(&from_sim, &other));
}

Test(forward, a_kernel_launch_runs_the_drivers_kernel)
{
	CUfunction f;
	CU_OK(SYM(shim, cuModuleGetFunction)(&f, start_context(shim), "ember_saxpy"));
	size_t off = 9, size = 9;
	CU_OK(SYM(shim, cuFuncGetParamInfo)(f, 1, &off, &size));
	cr_expect_eq(size, 8, "x is a pointer");
	cr_expect_eq(off, 8, "after a float, aligned to 8");

	enum { N = 1000 };
	CUdeviceptr x, y;
	CU_OK(SYM(shim, cuMemAllocManaged)(&x, N * sizeof(float), CU_MEM_ATTACH_GLOBAL));
	CU_OK(SYM(shim, cuMemAllocManaged)(&y, N * sizeof(float), CU_MEM_ATTACH_GLOBAL));
	for (int i = 0; i < N; i++) {
		((float *)x)[i] = (float)i;
		((float *)y)[i] = 1.0f;
	}
	float a = 2.0f;
	unsigned n = N;
	void *params[] = { &a, &x, &y, &n };
	CU_OK(SYM(shim, cuLaunchKernel)(f, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
	CU_OK(SYM(shim, cuCtxSynchronize)());
	for (int i = 0; i < N; i++)
		cr_assert_eq(((float *)y)[i], 2.0f * i + 1.0f, "y[%d]", i);
	CU_OK(SYM(shim, cuMemFree_v2)(x));
	CU_OK(SYM(shim, cuMemFree_v2)(y));
}
