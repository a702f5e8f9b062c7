/*
 * Kernel launches. The kernel's host function runs at once on the calling
 * thread, handed a pointer to each argument; whatever memory traffic it
 * reports (ember_sim_access) becomes the kernel's virtual duration, on top
 * of a fixed launch cost, queued on the launch's stream.
 */
#include <string.h>

#include "cost.h"
#include "sim.h"

/* H200 limits (device.c reports the same). */
#define MAX_BLOCK_X 1024u
#define MAX_BLOCK_Y 1024u
#define MAX_BLOCK_Z 64u
#define MAX_THREADS_PER_BLOCK 1024u
#define MAX_GRID_X 2147483647u
#define MAX_GRID_YZ 65535u
#define MAX_SHARED_BYTES 232448u
#define SMS 132u
#define MAX_BLOCKS_PER_SM 32u
#define MAX_THREADS_PER_SM 2048u

struct launch {
	CUfunction f;
	unsigned grid[3], block[3], shared;
	CUstream stream;
	void **params, **extra;
	bool per_thread, cooperative;
};

/* The uses of memory a launch's hazards are checked for; past these, the rest are not. */
#define NOTED_USES 16

/* Memory a running kernel reported touching (ember_sim_access), for EMBER_SIM_HAZARDS. */
struct use {
	uintptr_t p;
	size_t bytes;
	bool write;
};

/* The kernel this thread is running, the virtual time it has used so far, and what it touched. */
static __thread struct running {
	const struct ember_sim_launch *launch;
	uint64_t cost;
	struct use uses[NOTED_USES];
	unsigned nuses;
} running;

const struct ember_sim_launch *sim_current_launch(void)
{
	return running.launch;
}

void sim_launch_note_use(uintptr_t p, size_t bytes, bool write)
{
	if (sim_globals.hazards && running.nuses < NOTED_USES)
		running.uses[running.nuses++] = (struct use){ p, bytes, write };
}

void sim_launch_charge(uint64_t ns)
{
	running.cost += ns;
}

static CUresult check_shape(const struct launch *l)
{
	const unsigned *g = l->grid, *b = l->block;
	if (!g[0] || !g[1] || !g[2] || !b[0] || !b[1] || !b[2])
		return CUDA_ERROR_INVALID_VALUE;
	if (b[0] > MAX_BLOCK_X || b[1] > MAX_BLOCK_Y || b[2] > MAX_BLOCK_Z ||
	    (uint64_t)b[0] * b[1] * b[2] > MAX_THREADS_PER_BLOCK)
		return CUDA_ERROR_INVALID_VALUE;
	if (g[0] > MAX_GRID_X || g[1] > MAX_GRID_YZ || g[2] > MAX_GRID_YZ)
		return CUDA_ERROR_INVALID_VALUE;
	if (l->shared > MAX_SHARED_BYTES)
		return CUDA_ERROR_INVALID_VALUE;
	if (l->cooperative) { /* every block must be resident at once */
		uint64_t threads = (uint64_t)b[0] * b[1] * b[2];
		uint64_t per_sm = SIM_MIN((uint64_t)MAX_BLOCKS_PER_SM, MAX_THREADS_PER_SM / threads);
		if ((uint64_t)g[0] * g[1] * g[2] > SMS * per_sm)
			return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
	}
	return CUDA_SUCCESS;
}

/*
 * Pointers to each argument: kernelParams as given, or into a copy of the
 * packed `extra` buffer (copied so that every argument is aligned).
 */
static CUresult gather_params(const struct sim_kernel *k, void **kernel_params, void **extra, void **out,
			      unsigned char *packed_copy)
{
	if (kernel_params && extra)
		return CUDA_ERROR_INVALID_VALUE;
	if (kernel_params) {
		for (unsigned i = 0; i < k->nparams; i++)
			if (!(out[i] = kernel_params[i]))
				return CUDA_ERROR_INVALID_VALUE;
		return CUDA_SUCCESS;
	}
	if (!extra)
		return k->nparams ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
	const void *buffer = NULL;
	const size_t *size = NULL;
	for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			buffer = extra[i + 1];
		else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
			size = extra[i + 1];
		else
			return CUDA_ERROR_INVALID_VALUE;
	}
	if (k->nparams == 0)
		return CUDA_SUCCESS;
	if (!buffer || !size || *size < k->args_bytes)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(packed_copy, buffer, k->args_bytes);
	for (unsigned i = 0; i < k->nparams; i++)
		out[i] = packed_copy + k->offsets[i];
	return CUDA_SUCCESS;
}

static CUresult launch(const struct launch *l)
{
	struct sim_stream *s;
	struct sim_func *f;
	CUresult r = sim_stream_resolve(l->stream, l->per_thread, &s);
	if (r == CUDA_SUCCESS)
		r = sim_func_check(l->f, &f);
	if (r == CUDA_SUCCESS)
		r = check_shape(l);
	void *params[SIM_MAX_PARAMS];
	_Alignas(16) unsigned char packed[SIM_MAX_PARAM_BYTES];
	if (r == CUDA_SUCCESS)
		r = gather_params(f->kernel, l->params, l->extra, params, packed);
	if (r != CUDA_SUCCESS)
		return r;
	CUgraph capture = __atomic_load_n(&s->capture, __ATOMIC_ACQUIRE);
	if (capture) { /* recorded, not run (capture.c) */
		CUDA_KERNEL_NODE_PARAMS node = {
			.func = l->f, .gridDimX = l->grid[0], .gridDimY = l->grid[1], .gridDimZ = l->grid[2],
			.blockDimX = l->block[0], .blockDimY = l->block[1], .blockDimZ = l->block[2],
			.sharedMemBytes = l->shared, .kernelParams = params,
		};
		r = sim_capture_admit(s);
		return r != CUDA_SUCCESS ? r : sim_graph_add_kernel(capture, &node);
	}

	struct ember_sim_launch info = {
		.grid = { l->grid[0], l->grid[1], l->grid[2] },
		.block = { l->block[0], l->block[1], l->block[2] },
		.shared_bytes = l->shared,
		.stream = l->stream,
		.device = s->ctx->device,
	};
	struct running outer = running; /* a host function may itself launch */
	running = (struct running){ .launch = &info };
	f->kernel->fn(&info, params);
	struct running done = running;
	running = outer;
	uint64_t end = sim_stream_enqueue(s, SIM_LAUNCH_NS + done.cost);
	for (unsigned i = 0; i < done.nuses; i++)
		sim_hazard_note(done.uses[i].p, done.uses[i].bytes, done.uses[i].write, s,
				end - (SIM_LAUNCH_NS + done.cost), end, "a launch");
	return CUDA_SUCCESS;
}

static CUresult launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			      unsigned bz, unsigned shared, CUstream stream, void **params, void **extra,
			      bool per_thread, bool cooperative)
{
	struct launch l = { .f = f, .grid = { gx, gy, gz }, .block = { bx, by, bz }, .shared = shared,
			    .stream = stream, .params = params, .extra = extra, .per_thread = per_thread,
			    .cooperative = cooperative };
	return launch(&l);
}

CUresult sim_launch_node(const CUDA_KERNEL_NODE_PARAMS *p, CUstream stream, bool per_thread)
{
	return launch_kernel(p->func, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY,
			     p->blockDimZ, p->sharedMemBytes, stream, p->kernelParams, p->extra, per_thread, false);
}

SIM_EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
					   unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
					   unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
					   void **kernelParams, void **extra)
{
	return launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
			     hStream, kernelParams, extra, false, false);
}

SIM_EXPORT CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
						unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
						unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
						void **kernelParams, void **extra)
{
	return launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
			     hStream, kernelParams, extra, true, false);
}

SIM_EXPORT CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
						      unsigned int gridDimZ, unsigned int blockDimX,
						      unsigned int blockDimY, unsigned int blockDimZ,
						      unsigned int sharedMemBytes, CUstream hStream,
						      void **kernelParams)
{
	return launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
			     hStream, kernelParams, NULL, false, true);
}

SIM_EXPORT CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX,
							   unsigned int gridDimY, unsigned int gridDimZ,
							   unsigned int blockDimX, unsigned int blockDimY,
							   unsigned int blockDimZ, unsigned int sharedMemBytes,
							   CUstream hStream, void **kernelParams)
{
	return launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
			     hStream, kernelParams, NULL, true, true);
}

/* Of the launch attributes, only cooperative changes what the sim checks. */
static CUresult launch_ex(const CUlaunchConfig *config, CUfunction f, void **params, void **extra,
			  bool per_thread)
{
	SIM_REQUIRE_INIT();
	if (!config || (config->numAttrs && !config->attrs))
		return CUDA_ERROR_INVALID_VALUE;
	bool cooperative = false;
	for (unsigned i = 0; i < config->numAttrs; i++)
		if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
			cooperative = config->attrs[i].value.cooperative != 0;
	return launch_kernel(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
			     config->blockDimY, config->blockDimZ, config->sharedMemBytes, config->hStream, params,
			     extra, per_thread, cooperative);
}

SIM_EXPORT CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
					     void **extra)
{
	return launch_ex(config, f, kernelParams, extra, false);
}

SIM_EXPORT CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
						  void **kernelParams, void **extra)
{
	return launch_ex(config, f, kernelParams, extra, true);
}

/* A host function in stream order: it runs now, like everything else, and takes no GPU time. */
static CUresult launch_host_func(CUstream hStream, CUhostFn fn, void *userData, bool per_thread)
{
	struct sim_stream *s;
	CUresult r = sim_stream_resolve(hStream, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	sim_stream_enqueue(s, 0);
	fn(userData);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
	return launch_host_func(hStream, fn, userData, false);
}

SIM_EXPORT CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
	return launch_host_func(hStream, fn, userData, true);
}
