/* Finding the driver, failing clearly without one, and surviving fork(). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ember/ember.h"
#include "harness.h"

static char log_path[64];

/* Route the shim's log lines to a file the test can read. */
static void capture_log(void)
{
	snprintf(log_path, sizeof log_path, "/tmp/ember-loader-log-XXXXXX");
	temp_file_env("EMBER_LOG_FILE", log_path);
	setenv("EMBER_LOG", "info", 1);
}

static char *read_log(void)
{
	static char buf[8192];
	read_file(log_path, buf, sizeof buf);
	return buf;
}

/* A folder holding libcuda.so.1 as a link to target. */
static const char *driver_dir(const char *target)
{
	char *dir = strdup("/tmp/ember-driver-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	char link[PATH_MAX];
	snprintf(link, sizeof link, "%s/libcuda.so.1", dir);
	cr_assert_eq(symlink(target, link), 0);
	return dir;
}

Test(loader, no_driver_gives_a_clear_error_and_no_crash)
{
	capture_log();
	setenv("EMBER_REAL_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
	setenv("EMBER_DRIVER_SEARCH", "/nonexistent-dir", 1);
	void *shim = load_shim();
	cr_expect_eq(SYM(shim, cuInit)(0), CUDA_ERROR_STUB_LIBRARY);
	int n = 7;
	cr_expect_eq(SYM(shim, cuDeviceGetCount)(&n), CUDA_ERROR_STUB_LIBRARY);
	cr_expect_eq(n, 7, "out-parameters are untouched");
	void *p = NULL;
	cr_expect_eq(SYM(shim, cuGetProcAddress_v2)("cuInit", &p, 13000, 0, NULL), CUDA_ERROR_STUB_LIBRARY);
	cr_expect_str_eq(SYM(shim, ember_real_driver)(), "");
	const char *log = read_log();
	cr_expect_not_null(strstr(log, "cannot find the real CUDA driver"), "%s", log);
	cr_expect_not_null(strstr(log, "/nonexistent/libcuda.so.1 (not found)"), "%s", log);
	cr_expect_not_null(strstr(log, "/nonexistent-dir/libcuda.so.1 (not found)"), "%s", log);
	cr_expect_not_null(strstr(log, "EMBER_REAL_LIBCUDA"), "%s", log);
	const char *again = strstr(log, "cannot find the real CUDA driver");
	cr_expect_null(strstr(again + 1, "cannot find the real CUDA driver"), "the error is said once");
}

Test(loader, skips_itself_and_finds_the_driver_by_search)
{
	capture_log();
	const char *self_dir = driver_dir(EMBER_SHIM_PATH);
	const char *sim_dir = driver_dir(EMBER_SIM_PATH);
	char search[256];
	snprintf(search, sizeof search, "%s:%s", self_dir, sim_dir);
	setenv("EMBER_REAL_LIBCUDA", EMBER_SHIM_PATH, 1);
	setenv("EMBER_DRIVER_SEARCH", search, 1);
	void *shim = load_shim();
	CU_OK(SYM(shim, cuInit)(0));
	char want[PATH_MAX];
	cr_assert_not_null(realpath(EMBER_SIM_PATH, want));
	cr_expect_str_eq(SYM(shim, ember_real_driver)(), want);
	const char *log = read_log();
	cr_expect_not_null(strstr(log, "is Ember itself"), "%s", log);
	cr_expect_not_null(strstr(log, "forwarding to the real driver"), "%s", log);
}

Test(loader, a_function_the_driver_lacks_returns_not_supported)
{
	capture_log();
	void *shim = load_shim();
	CU_OK(SYM(shim, cuInit)(0));
	/* the simulated driver implements no graphics interop */
	CUresult (*fn)(void) = (CUresult(*)(void))must_dlsym(shim, "cuGraphicsUnregisterResource");
	cr_expect_eq(fn(), CUDA_ERROR_NOT_SUPPORTED);
	cr_expect_eq(fn(), CUDA_ERROR_NOT_SUPPORTED);
	cr_expect_not_null(strstr(read_log(), "has no cuGraphicsUnregisterResource"));
}

/* In a child: the driver answers through the shim, memory works. */
static int child_uses_driver(void *shim)
{
	if (SYM(shim, cuInit)(0) != CUDA_SUCCESS)
		return 1;
	CUdevice d;
	CUcontext ctx;
	if (SYM(shim, cuDeviceGet)(&d, 0) || SYM(shim, cuDevicePrimaryCtxRetain)(&ctx, d) ||
	    SYM(shim, cuCtxSetCurrent)(ctx))
		return 2;
	CUdeviceptr p;
	unsigned v = 0x5eed, back = 0;
	if (SYM(shim, cuMemAlloc_v2)(&p, 4) || SYM(shim, cuMemcpyHtoD_v2)(p, &v, 4) ||
	    SYM(shim, cuMemcpyDtoH_v2)(&back, p, 4) || back != v)
		return 3;
	return 0;
}

static int status_of_child(void *shim)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(child_uses_driver(shim));
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "the child crashed");
	return WEXITSTATUS(status);
}

Test(loader, a_forked_child_can_use_the_driver)
{
	void *shim = load_shim();
	CU_OK(SYM(shim, cuInit)(0));
	cr_expect_eq(status_of_child(shim), 0);
	cr_expect_eq(child_uses_driver(shim), 0, "the parent still works");
}

Test(loader, a_child_forked_before_the_first_call_opens_the_driver_itself)
{
	void *shim = load_shim();
	cr_expect_eq(status_of_child(shim), 0);
}
