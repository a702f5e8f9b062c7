/*
 * The simulated driver's test API: what libember-sim.so offers besides the
 * cu* entry points. Tests either link the library or dlsym these names from
 * it; an application never sees them.
 *
 * Locations are ints throughout: a device ordinal (>= 0), EMBER_SIM_HOST,
 * or EMBER_SIM_NOWHERE (never populated, or advice that is not set).
 */
#ifndef EMBER_SIM_H
#define EMBER_SIM_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EMBER_SIM_API __attribute__((visibility("default")))

#define EMBER_SIM_HOST (-1)
#define EMBER_SIM_NOWHERE (-2)

/* Managed memory is modelled in blocks of this size, from the allocation's start. */
#define EMBER_SIM_BLOCK_BYTES ((size_t)2 << 20)

/* ---- kernels: host functions registered by name ---- */

struct ember_sim_launch {
	unsigned grid[3], block[3];
	unsigned shared_bytes;
	CUstream stream;  /* as the caller passed it */
	int device;       /* the device the kernel runs on */
};

/* params[i] points at the i-th argument, as with cuLaunchKernel's kernelParams. */
typedef void (*ember_sim_kernel_fn)(const struct ember_sim_launch *launch, void **params);

/*
 * Make `name` loadable: a PTX ".entry name(" or the "ember-sim:" image binds
 * to fn. param_sizes gives each argument's size in bytes; offsets follow
 * with natural alignment (each aligned to min(size, 8)), as
 * cuFuncGetParamInfo reports. Returns 0, or -1 for bad arguments or a
 * name already registered with a different function or signature.
 */
EMBER_SIM_API int ember_sim_register_kernel(const char *name, ember_sim_kernel_fn fn,
					    const size_t *param_sizes, unsigned nparams);

/*
 * A kernel reports what it touches, before touching it. This is the
 * simulated GPU's memory traffic: it costs virtual time by where the bytes
 * live, populates and migrates managed blocks as the driver would, and
 * counts accesses per block. Called outside a kernel, it models the CPU
 * touching the memory. Call it from the thread that runs the kernel.
 */
EMBER_SIM_API void ember_sim_access(const void *ptr, size_t bytes, int write);

/* The built-in kernels (sim/kernels.c), loadable by these names:
 *   ember_saxpy(float a, const float *x, float *y, unsigned n)
 *       y[i] = a * x[i] + y[i] for i < n and i < grid.x * block.x
 *   ember_fill_u32(unsigned *p, unsigned value, size_t n)
 *       p[i] = value for every i < n
 *   ember_reread_sum(const float *x, size_t n, unsigned passes, float *out)
 *       reads x `passes` times (each pass a reported access); *out = the sum of x
 */

/* ---- virtual time ---- */

/* The simulated host's clock: advanced by synchronous calls and by waiting on work. */
EMBER_SIM_API uint64_t ember_sim_now_ns(void);

/* Under EMBER_SIM_HAZARDS, how many pieces of work touched memory another stream's work may still use. */
EMBER_SIM_API unsigned long long ember_sim_hazard_count(void);

/* ---- managed memory, per block ---- */

struct ember_sim_block_info {
	int location;          /* where it lives: device, EMBER_SIM_HOST or EMBER_SIM_NOWHERE */
	int host_copy;         /* read-mostly duplicate in host memory as well */
	int preferred;         /* preferred location, EMBER_SIM_NOWHERE when unset */
	int last_prefetch;     /* EMBER_SIM_NOWHERE when never prefetched */
	int read_mostly;
	uint32_t accessed_by;  /* bit d: device d; bit 31: the host */
	uint32_t mapped;       /* bit d: device d reads it where it is through a mapping, with no fault */
	uint64_t accesses;     /* ember_sim_access calls by kernels touching the block */
	uint64_t bytes_accessed;
	uint64_t cpu_accesses; /* ember_sim_access calls outside kernels */
};

/* The block holding addr. Returns 0, or -1 when addr is not managed memory. */
EMBER_SIM_API int ember_sim_block_info(const void *addr, struct ember_sim_block_info *out);
/* Its location, or EMBER_SIM_NOWHERE (also for addresses that are not managed). */
EMBER_SIM_API int ember_sim_block_location(const void *addr);
/* Kernel accesses reported for its block: the "true accesses" a policy can be judged by. */
EMBER_SIM_API uint64_t ember_sim_block_accesses(const void *addr);

/* Where a cuMemCreate handle's memory lives: its device or EMBER_SIM_HOST. */
EMBER_SIM_API int ember_sim_physical_location(CUmemGenericAllocationHandle handle);

/* ---- accounting ---- */

/* Managed bytes resident on a device (read-mostly duplicates included). */
EMBER_SIM_API uint64_t ember_sim_device_resident_bytes(int dev);
/* The most managed memory ever resident on a device at once: budgets are judged by it. */
EMBER_SIM_API uint64_t ember_sim_device_peak_resident_bytes(int dev);
/* Everything in use on a device: cuMemAlloc memory plus resident managed memory. */
EMBER_SIM_API uint64_t ember_sim_device_used_bytes(int dev);

enum ember_sim_direction { EMBER_SIM_TO_DEVICE = 0, EMBER_SIM_TO_HOST = 1 };
/* Managed bytes migrated so far in one direction (prefetches, faults, evictions). */
EMBER_SIM_API uint64_t ember_sim_bytes_migrated(int dir);

/*
 * A driver error on demand: the next `count` prefetches toward `to`
 * (EMBER_SIM_TO_DEVICE or EMBER_SIM_TO_HOST) fail with `result` and move
 * nothing. A count of 0 ends it.
 */
EMBER_SIM_API void ember_sim_fail_prefetches(int to, unsigned count, CUresult result);

/*
 * Any entry point on demand: after `skip` more calls succeed, the next
 * `count` calls of `name` (its exported name, such as "cuStreamCreate")
 * fail with `result`. A count of 0 ends it. Covered: cuMemAdvise_v2,
 * cuMemPrefetchAsync_v2, cuStreamCreate, cuEventCreate, cuModuleLoadData,
 * cuMemAllocManaged, cuMemCreate, cuStreamSynchronize (its _ptsz form too).
 */
EMBER_SIM_API void ember_sim_fail_call(const char *name, unsigned skip, unsigned count, CUresult result);
/* The same calls, succeeding after delay_ns each: a driver call that holds its thread (advice on a busy GPU). */
EMBER_SIM_API void ember_sim_slow_call(const char *name, unsigned skip, unsigned count, uint64_t delay_ns);

/* ---- cuGetExportTable ---- */

/* The one export table id the simulated driver knows: 16 bytes. */
#define EMBER_SIM_TEST_EXPORT_UUID "ember-sim-table!"
#define EMBER_SIM_TEST_EXPORT_MAGIC 0x5eed

struct ember_sim_test_export_table {
	size_t size;          /* of this struct, as the driver's own tables begin */
	int (*magic)(void);   /* returns EMBER_SIM_TEST_EXPORT_MAGIC */
};

#ifdef __cplusplus
}
#endif

#endif
