/* cuInit, the configuration, and surviving fork(). */
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "config.h"
#include "sim.h"

struct sim_globals sim_globals;

pthread_mutex_t sim_ctx_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t sim_code_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t sim_handles_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t sim_mem_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t sim_time_lock = PTHREAD_MUTEX_INITIALIZER;

/* In the documented lock order. */
static pthread_mutex_t *const all_locks[] = {
	&sim_ctx_lock, &sim_code_lock, &sim_handles_lock, &sim_mem_lock, &sim_time_lock,
};
#define NLOCKS (sizeof all_locks / sizeof all_locks[0])

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static atomic_bool initialized;

/* A share of EMBER_SIM_MEMORY ("50%") is taken of host memory: that is what backs it. */
static uint64_t host_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 80ull << 30;
}

static void load_config(void)
{
	struct ember_config cfg;
	char err[256] = "";
	if (ember_config_load(&cfg, err, sizeof err) != 0)
		fprintf(stderr, "ember-sim: %s; using its default\n", err);
	sim_globals.physical_devices = cfg.sim_devices < 1 ? 1 : SIM_MIN(cfg.sim_devices, SIM_MAX_DEVICES);
	sim_globals.devices = sim_visible_setup(sim_globals.physical_devices, sim_globals.physical);
	sim_globals.device_memory = ember_size_resolve(cfg.sim_memory, host_memory());
	sim_globals.hazards = cfg.sim_hazards;
	sim_hazards_setup();
	sim_peers_setup();
}

void sim_setup(void)
{
	pthread_once(&setup_once, load_config);
}

bool sim_initialized(void)
{
	return atomic_load_explicit(&initialized, memory_order_acquire);
}

SIM_EXPORT CUresult CUDAAPI cuInit(unsigned int Flags)
{
	if (Flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	sim_setup();
	atomic_store_explicit(&initialized, true, memory_order_release);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = SIM_DRIVER_VERSION;
	return CUDA_SUCCESS;
}

/*
 * fork(): the child gets a copy of every table, so each must be consistent
 * when the copy is taken. Hold every lock across the fork; the child, the
 * only thread left, starts with fresh ones.
 */
static void before_fork(void)
{
	for (size_t i = 0; i < NLOCKS; i++)
		pthread_mutex_lock(all_locks[i]);
}

static void after_fork_parent(void)
{
	for (size_t i = NLOCKS; i-- > 0;)
		pthread_mutex_unlock(all_locks[i]);
}

static void after_fork_child(void)
{
	for (size_t i = 0; i < NLOCKS; i++)
		pthread_mutex_init(all_locks[i], NULL);
}

/*
 * The kernels are registered before the fork handlers are installed: a
 * loader (Ember's shim) may hold its own lock across the dlopen that runs
 * this, and a fork in another thread runs these handlers (the kernel-table
 * lock) before the loader's (its lock). Registered after, a fork during the
 * registration deadlocked the two threads.
 */
__attribute__((constructor)) static void sim_load(void)
{
	sim_register_builtin_kernels();
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/*
 * There is deliberately no destructor: at exit, other threads may still be
 * inside the driver, and the tables stay reachable for leak checkers.
 */
