#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ember/ember.h"
#include "ember_sim.h"
#include "harness.h"

/* The build's libraries, or an installed copy's (HARNESS_SHIM, HARNESS_SIM: tests/tools/test_install.sh). */
static const char *path_of(const char *var, const char *built)
{
	const char *p = getenv(var);
	return p && *p ? p : built;
}

void *load_sim(void)
{
	void *h = dlopen(path_of("HARNESS_SIM", EMBER_SIM_PATH), RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(h, "cannot load the simulated driver: %s", dlerror());
	return h;
}

void *load_shim(void)
{
	setenv("EMBER_REAL_LIBCUDA", path_of("HARNESS_SIM", EMBER_SIM_PATH), 0);
	void *h = dlopen(path_of("HARNESS_SHIM", EMBER_SHIM_PATH), RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(h, "cannot load the shim: %s", dlerror());
	return h;
}

void *must_dlsym(void *handle, const char *name)
{
	void *p = dlsym(handle, name);
	cr_assert_not_null(p, "%s is not exported", name);
	return p;
}

CUmodule start_context(void *shim)
{
	CUdevice d;
	CUcontext ctx;
	CUmodule mod;
	CU_OK(SYM(shim, cuInit)(0));
	CU_OK(SYM(shim, cuDeviceGet)(&d, 0));
	CU_OK(SYM(shim, cuDevicePrimaryCtxRetain)(&ctx, d));
	CU_OK(SYM(shim, cuCtxSetCurrent)(ctx));
	CU_OK(SYM(shim, cuModuleLoadData)(&mod, "ember-sim:"));
	return mod;
}

CUcontext own_context(void *shim, CUcontext *was)
{
	CUdevice d;
	CUcontext own;
	CU_OK(SYM(shim, cuDeviceGet)(&d, 0));
	CU_OK(SYM(shim, cuCtxGetCurrent)(was));
	CU_OK(SYM(shim, cuCtxCreate_v2)(&own, 0, d));
	return own;
}

void launch_reread_on(void *shim, CUfunction f, CUdeviceptr p, size_t bytes, CUstream stream)
{
	static float sum;
	size_t n = bytes / sizeof(float);
	unsigned passes = 1;
	float *out = &sum;
	void *params[] = { &p, &n, &passes, &out };
	CU_OK(SYM(shim, cuLaunchKernel)(f, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL));
}

void launch_reread(void *shim, CUfunction f, CUdeviceptr p, size_t bytes)
{
	launch_reread_on(shim, f, p, bytes, NULL);
}

void sync_and_flush(void *shim)
{
	CU_OK(SYM(shim, cuCtxSynchronize)());
	cr_assert_eq(SYM(shim, ember_flush)(), 0);
}

void launch_fill(void *shim, CUfunction f, CUdeviceptr p, size_t n)
{
	unsigned value = 7;
	void *params[] = { &p, &value, &n };
	CU_OK(SYM(shim, cuLaunchKernel)(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
}

CUdeviceptr resident_allocation(void *shim, void *sim, CUfunction f, size_t bytes)
{
	CUdeviceptr p = 0;
	CU_OK(SYM(shim, cuMemAllocManaged)(&p, bytes, CU_MEM_ATTACH_GLOBAL));
	memset((void *)p, 0x11, bytes);
	launch_fill(shim, f, p, bytes / sizeof(unsigned));
	sync_and_flush(shim);
	cr_assert_eq(SYM(sim, ember_sim_block_location)((void *)p), 0, "promoted to GPU 0");
	return p;
}

void host_reads_back(void *shim, void *sim, CUfunction f, CUdeviceptr p, size_t bytes, size_t fresh_pages,
		     unsigned sleep_ms)
{
	/* a launch ends whatever phase came before; the phase under test starts at the wait after it */
	launch_fill(shim, f, p, 0);
	CU_OK(SYM(shim, cuCtxSynchronize)());
	SYM(sim, ember_sim_access)((void *)p, bytes, 0);
	cr_assert_eq(SYM(sim, ember_sim_block_location)((void *)p), EMBER_SIM_HOST, "the host took it");
	host_faults(fresh_pages, sleep_ms);
}

void host_faults(size_t fresh_pages, unsigned sleep_ms)
{
	/* the simulated driver's host memory is plain memory: the page faults come from fresh pages */
	size_t len = fresh_pages * 4096;
	if (len) {
		unsigned char *fresh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		cr_assert_neq(fresh, MAP_FAILED);
		for (size_t i = 0; i < len; i += 4096)
			fresh[i] = 1;
		munmap(fresh, len);
	}
	struct timespec nap = { sleep_ms / 1000, (long)(sleep_ms % 1000) * 1000000 };
	nanosleep(&nap, NULL);
}

void table1_watermarks(void)
{
	setenv("EMBER_HIGH_WATERMARK", "90", 1);
	setenv("EMBER_LOW_WATERMARK", "85", 1);
}

void temp_file_env(const char *var, char *path_template)
{
	int fd = mkstemp(path_template);
	cr_assert_geq(fd, 0, "cannot make %s", path_template);
	close(fd);
	setenv(var, path_template, 1);
}

size_t read_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "cannot open %s", path);
	size_t n = fread(buf, 1, size - 1, f);
	buf[n] = 0;
	fclose(f);
	return n;
}

unsigned lines_with(const char *text, const char *needle)
{
	unsigned n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

pid_t run_in_child(void (*child)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		child();
		exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return pid;
}

size_t output_of_child(const char *var, void (*child)(void), char *buf, size_t len)
{
	char path[] = "/tmp/ember-output-XXXXXX";
	temp_file_env(var, path);
	run_in_child(child);
	size_t n = read_file(path, buf, len);
	unlink(path);
	cr_assert_gt(n, 0, "%s=%s was left empty", var, path);
	return n;
}

CUgraphExec one_kernel_graph(void *shim, CUfunction f, void **params, CUgraph *graph)
{
	CUgraphExec exec;
	CUgraphNode node;
	CUDA_KERNEL_NODE_PARAMS kp = { .func = f, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 1,
				       .blockDimY = 1, .blockDimZ = 1, .kernelParams = params };
	CU_OK(SYM(shim, cuGraphCreate)(graph, 0));
	CU_OK(SYM(shim, cuGraphAddKernelNode_v2)(&node, *graph, NULL, 0, &kp));
	CU_OK(SYM(shim, cuGraphInstantiateWithFlags)(&exec, *graph, 0));
	return exec;
}
