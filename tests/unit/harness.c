#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

void launch_reread(void *shim, CUfunction f, CUdeviceptr p, size_t bytes)
{
	static float sum;
	size_t n = bytes / sizeof(float);
	unsigned passes = 1;
	float *out = &sum;
	void *params[] = { &p, &n, &passes, &out };
	CU_OK(SYM(shim, cuLaunchKernel)(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
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
