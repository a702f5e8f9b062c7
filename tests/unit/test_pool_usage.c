/*
 * A pool's usage attributes count the allocations of its that Ember
 * converted, and the freed ones it keeps (shim/mech/pool_usage.h), as
 * PyTorch's cudaMallocAsync backend reads them for memory_allocated() and
 * its peaks; without Ember's conversion they are the driver's alone.
 */
#include <stdlib.h>

#include "ember_sim.h"
#include "harness.h"

#define MiB (1024u * 1024u)

static void *sim, *shim;

/* The shim over the simulated driver, static, a 64 MiB budget, manage_all and keep_freed as given. */
static void start(const char *manage_all, const char *keep_freed)
{
	setenv("EMBER_MODE", "static", 1);
	setenv("EMBER_BUDGET", "64M", 1);
	setenv("EMBER_MANAGE_ALL", manage_all, 1);
	setenv("EMBER_KEEP_FREED", keep_freed, 1);
	sim = load_sim();
	shim = load_shim();
	start_context(shim);
}

static CUmemoryPool default_pool(void)
{
	CUmemoryPool pool;
	CU_OK(SYM(shim, cuDeviceGetDefaultMemPool)(&pool, 0));
	return pool;
}

/* attr of pool as the program sees it, through Ember. */
static cuuint64_t usage(CUmemoryPool pool, CUmemPool_attribute attr)
{
	cuuint64_t v = 0;
	CU_OK(SYM(shim, cuMemPoolGetAttribute)(pool, attr, &v));
	return v;
}

static void reset_high(CUmemoryPool pool, CUmemPool_attribute attr)
{
	cuuint64_t zero = 0;
	CU_OK(SYM(shim, cuMemPoolSetAttribute)(pool, attr, &zero));
}

static int is_managed(CUdeviceptr p)
{
	int managed = -1;
	CU_OK(SYM(shim, cuPointerGetAttribute)(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p));
	return managed;
}

static CUdeviceptr alloc_async(size_t bytes, CUstream stream)
{
	CUdeviceptr p;
	CU_OK(SYM(shim, cuMemAllocAsync)(&p, bytes, stream));
	return p;
}

/*
 * Under manage-all and EMBER_KEEP_FREED=16M, the default pool (in *pool)
 * keeping all it is given: 4 MiB allocated on a new stream (in *stream)
 * and freed there, so Ember keeps it. Its address.
 */
static CUdeviceptr kept_4mib(CUmemoryPool *pool, CUstream *stream)
{
	start("1", "16M");
	*pool = default_pool();
	cuuint64_t all = UINT64_MAX;
	CU_OK(SYM(shim, cuMemPoolSetAttribute)(*pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &all));
	CU_OK(SYM(shim, cuStreamCreate)(stream, CU_STREAM_NON_BLOCKING));
	CUdeviceptr p = alloc_async(4 * MiB, *stream);
	CU_OK(SYM(shim, cuMemFreeAsync)(p, *stream));
	return p;
}

/* Converted allocations count as in use and reserved; their frees take them off; a reset high mark restarts. */
Test(pool_usage, converted_allocations_count_in_their_pool_s_usage)
{
	start("1", "0");
	CUmemoryPool pool = default_pool();
	CUdeviceptr a = alloc_async(4 * MiB, NULL), b = alloc_async(2 * MiB, NULL);
	cr_assert_eq(is_managed(a), 1, "converted");
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 6 * MiB);
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 6 * MiB);
	CU_OK(SYM(shim, cuMemFreeAsync)(b, NULL));
	CU_OK(SYM(shim, cuStreamSynchronize)(NULL));
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 4 * MiB);
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH), 6 * MiB, "the peak stays");
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH), 6 * MiB);
	reset_high(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH);
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH), 4 * MiB, "reset to what is in use");
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH), 6 * MiB, "the other mark is not reset");
	CU_OK(SYM(shim, cuMemFree_v2)(a)); /* a synchronous free of stream-ordered memory */
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 0);
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 0);
	cuuint64_t nonzero = 1;
	cr_expect_eq(SYM(shim, cuMemPoolSetAttribute)(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &nonzero),
		     CUDA_ERROR_INVALID_VALUE, "a high mark is reset to 0 only, as the driver's");
}

/* Freed memory Ember keeps stays reserved, not in use; reused, it is in use again; a trim lets it go. */
Test(pool_usage, kept_memory_is_reserved_until_let_go)
{
	CUmemoryPool pool;
	CUstream stream;
	CUdeviceptr p = kept_4mib(&pool, &stream);
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 0);
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 4 * MiB, "kept");
	CUdeviceptr q = alloc_async(4 * MiB, stream);
	cr_expect_eq(q, p, "the kept memory again");
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 4 * MiB);
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 4 * MiB);
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH), 4 * MiB, "one allocation's memory all along");
	CU_OK(SYM(shim, cuMemFreeAsync)(q, stream));
	CU_OK(SYM(shim, cuStreamSynchronize)(stream));
	CU_OK(SYM(shim, cuMemPoolTrimTo)(pool, 0));
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 0, "let go");
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 0);
	CU_OK(SYM(shim, cuStreamDestroy_v2)(stream));
}

/* A pool the program made counts its own allocations; the default pool sees none of them. */
Test(pool_usage, a_created_pool_counts_its_own)
{
	start("1", "0");
	CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
				 .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
	CUmemoryPool pool;
	CU_OK(SYM(shim, cuMemPoolCreate)(&pool, &props));
	CUdeviceptr p;
	CU_OK(SYM(shim, cuMemAllocFromPoolAsync)(&p, 2 * MiB, pool, NULL));
	cr_assert_eq(is_managed(p), 1, "converted");
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 2 * MiB);
	cr_expect_eq(usage(default_pool(), CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 0);
	CU_OK(SYM(shim, cuMemFreeAsync)(p, NULL));
	CU_OK(SYM(shim, cuStreamSynchronize)(NULL));
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 0);
	CU_OK(SYM(shim, cuMemPoolDestroy)(pool));
}

/* Without manage-all the pool's memory is the driver's, and its answers pass through as they are. */
Test(pool_usage, unconverted_memory_is_the_driver_s_to_count)
{
	start("0", "0");
	CUmemoryPool pool = default_pool();
	CUdeviceptr p = alloc_async(4 * MiB, NULL);
	cr_assert_eq(is_managed(p), 0, "the driver's");
	cuuint64_t direct = 0;
	CU_OK(SYM(sim, cuMemPoolGetAttribute)(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &direct));
	cr_expect_eq(direct, 4 * MiB, "the simulated driver counts it");
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), direct, "and Ember adds nothing");
	CU_OK(SYM(shim, cuMemFreeAsync)(p, NULL));
	CU_OK(SYM(shim, cuStreamSynchronize)(NULL));
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 0);
}

/*
 * The release threshold the program set is the one a synchronisation
 * keeps to, without asking the driver again: here the driver's answers
 * fail after the set, which would have read as a threshold of 0 and let
 * the kept memory go.
 */
Test(pool_usage, a_synchronisation_keeps_to_the_threshold_the_program_set)
{
	CUmemoryPool pool;
	CUstream stream;
	(void)kept_4mib(&pool, &stream);
	SYM(sim, ember_sim_fail_call)("cuMemPoolGetAttribute", 0, 100, CUDA_ERROR_INVALID_VALUE);
	CU_OK(SYM(shim, cuStreamSynchronize)(stream));
	CU_OK(SYM(shim, cuCtxSynchronize)());
	SYM(sim, ember_sim_fail_call)("cuMemPoolGetAttribute", 0, 0, CUDA_SUCCESS);
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 4 * MiB, "still kept");
	/* a lower threshold, set, is kept to at the next synchronisation */
	cuuint64_t none = 0;
	CU_OK(SYM(shim, cuMemPoolSetAttribute)(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &none));
	CU_OK(SYM(shim, cuCtxSynchronize)());
	cr_expect_eq(usage(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 0, "let go past the new threshold");
	CU_OK(SYM(shim, cuStreamDestroy_v2)(stream));
}
