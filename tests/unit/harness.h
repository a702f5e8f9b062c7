/* Loading the shim and the simulated driver side by side, for the tests. */
#ifndef EMBER_TEST_HARNESS_H
#define EMBER_TEST_HARNESS_H

#include <cuda.h>
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <sys/types.h>

/*
 * The simulated driver, loaded directly. The shim, loaded with
 * EMBER_REAL_LIBCUDA pointing at the same file, reaches the very same
 * instance, so a test can compare what the shim returns with what the
 * driver returns.
 */
void *load_sim(void);
/* The shim, forwarding to the simulated driver unless EMBER_* say otherwise. */
void *load_shim(void);

void *must_dlsym(void *handle, const char *name);

/* Through the shim: cuInit, device 0's primary context made current, and the
 * simulated driver's built-in kernels loaded. Returns the module. */
CUmodule start_context(void *shim);

/* Through the shim: a context of its own on GPU 0, made current; *was: the context current before. */
CUcontext own_context(void *shim, CUcontext *was);

/* Launch the simulated driver's ember_reread_sum f through the shim over [p, p + bytes), once: a launch Ember scans. */
void launch_reread(void *shim, CUfunction f, CUdeviceptr p, size_t bytes);
/* The same on stream (launch_reread's is NULL). */
void launch_reread_on(void *shim, CUfunction f, CUdeviceptr p, size_t bytes, CUstream stream);

/* Through the shim: wait for the GPU, then for Ember's moves (ember_flush). */
void sync_and_flush(void *shim);

/* Through the shim: the simulated driver's ember_fill_u32 f over n elements of p (n = 0: a launch that
 * references p and touches nothing). */
void launch_fill(void *shim, CUfunction f, CUdeviceptr p, size_t n);

/* A managed allocation the host wrote, promoted whole by a launch of ember_fill_u32 f over it (static: the
 * split at its first launch; adaptive: the launch's demand); asserts that it sits on GPU 0. */
CUdeviceptr resident_allocation(void *shim, void *sim, CUfunction f, size_t bytes);

/* The host reads bytes of p back (the driver takes the blocks to host memory) after the program waited for
 * the GPU, taking a page fault in each of fresh_pages new pages, then sleeps sleep_ms: a host phase. */
void host_reads_back(void *shim, void *sim, CUfunction f, CUdeviceptr p, size_t bytes, size_t fresh_pages,
		     unsigned sleep_ms);

/* Through the shim: a graph of one one-block launch of f with params, instantiated; *graph is set for its destroy. */
CUgraphExec one_kernel_graph(void *shim, CUfunction f, void **params, CUgraph *graph);

/* Run child() in a process of its own, which must exit 0 (and so run Ember's exit handlers). Returns its ID. */
pid_t run_in_child(void (*child)(void));

/* What child(), run so, wrote to a new private file that var (EMBER_STATS, say) names: into buf, NUL-ended. */
size_t output_of_child(const char *var, void (*child)(void), char *buf, size_t len);

/* The host's page faults of a host phase: one in each of fresh_pages new pages, then a sleep of sleep_ms. */
void host_faults(size_t fresh_pages, unsigned sleep_ms);

/* Table 1's watermarks (90 and 85), not the shim's defaults: the suite init of the tests whose counts of
 * regions and bytes are that split's. test_config checks the defaults themselves. */
void table1_watermarks(void);

/* Make an empty file from a mkstemp template (rewritten in place) and point var at it. */
void temp_file_env(const char *var, char *path_template);

/* Read up to size - 1 bytes of path into buf, NUL-terminated; the file must exist. Returns the length. */
size_t read_file(const char *path, char *buf, size_t size);
/* How many times needle occurs in text: a log's lines that say one thing. */
unsigned lines_with(const char *text, const char *needle);

/* A typed function pointer to `name` in a library. */
#define SYM(handle, name) ((__typeof__(&name))must_dlsym((handle), #name))

/* Assert that a driver call succeeded, naming it on failure. */
#define CU_OK(call) cr_assert_eq((call), CUDA_SUCCESS, "%s failed", #call)

#endif
