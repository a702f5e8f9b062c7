/*
 * Adaptive mode through the simulated driver: the launch scan feeds demand,
 * the worker promotes and reclaims on its own thread, the budget holds. The
 * simulated driver knows which 2 MiB blocks its host kernels really touch,
 * so the scan's accuracy is measured against the truth here.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ember/ember.h"
#include "ember_sim.h"
#include "harness.h"

#define MiB (1ull << 20)

static void *sim, *shim;
static CUfunction touch, touch4, touch4b, touch64, touch2, touch_struct, scaled, rows, frontier, half_piece, fused;
static CUfunction lists, apex_lists, cat;

/* Test kernels: read what their arguments say, and report it to the simulated GPU. */
static void k_touch(const struct ember_sim_launch *l, void **params)
{
	const float *x = *(const float **)params[0];
	size_t n = *(size_t *)params[1];
	SYM(sim, ember_sim_access)(x, n * sizeof(float), 0);
}

static void k_touch4(const struct ember_sim_launch *l, void **params)
{
	const float *x = *(const float **)params[0];
	size_t n = *(size_t *)params[1]; /* in 16-byte elements, as a float4 kernel counts */
	SYM(sim, ember_sim_access)(x, n * 16, 0);
}

static void k_half(const struct ember_sim_launch *l, void **params)
{
	const void *x = *(const void **)params[0];
	size_t n = *(size_t *)params[1]; /* in 2-byte halves, as its mangled name declares */
	SYM(sim, ember_sim_access)(x, n * 2, 0);
}

static void k_touch64(const struct ember_sim_launch *l, void **params)
{
	const float *x = *(const float **)params[0];
	size_t n = *(size_t *)params[1]; /* points of 16 floats, as k-means counts them */
	SYM(sim, ember_sim_access)(x, n * 64, 0);
}

static void k_touch2(const struct ember_sim_launch *l, void **params)
{
	size_t n = *(size_t *)params[2];
	SYM(sim, ember_sim_access)(*(const float **)params[0], n * sizeof(float), 0);
	SYM(sim, ember_sim_access)(*(const float **)params[1], n * sizeof(float), 0);
}

struct view {
	const float *p;
	size_t n;
};

static void k_touch_struct(const struct ember_sim_launch *l, void **params)
{
	const struct view *v = params[0];
	SYM(sim, ember_sim_access)(v->p, v->n * sizeof(float), 0);
}

/* llama.cpp's fused gate-and-up product: a weight, the gate weight in a structure of no type the scan knows, a count */
struct fusion {
	const void *gate;
};

static void k_fused(const struct ember_sim_launch *l, void **params)
{
	size_t n = *(size_t *)params[2];
	SYM(sim, ember_sim_access)(*(const void **)params[0], n * 2, 0);
	SYM(sim, ember_sim_access)(((const struct fusion *)params[1])->gate, n * 2, 0);
}

/* llama.cpp's shape: a weight, its element count, and a float scale (and a -1 for "no index"). */
static void k_scaled(const struct ember_sim_launch *l, void **params)
{
	SYM(sim, ember_sim_access)(*(const float **)params[0], *(size_t *)params[1] * sizeof(float), 0);
}

/* A dynamic programme's shape: the array's base, its width and the row to work on; it reads one column down. */
static void k_rows(const struct ember_sim_launch *l, void **params)
{
	const int *m = *(const int **)params[0];
	int cols = *(int *)params[1], nrows = *(int *)params[2];
	for (int r = 0; r < nrows; r++)
		SYM(sim, ember_sim_access)(m + (size_t)r * cols + r % cols, sizeof(int), 0);
}

/* A graph kernel's shape: the edge array's base and the frontier's length; it reads edges all over the array. */
static void k_frontier(const struct ember_sim_launch *l, void **params)
{
	const unsigned *edges = *(const unsigned **)params[0];
	int length = *(int *)params[1];
	for (int v = 0; v < length; v++) /* each frontier vertex's neighbours: a 2 MiB block apart */
		SYM(sim, ember_sim_access)(edges + (size_t)v * (MiB / 2) + 7 * v, 64, 0);
}

/*
 * PyTorch's multi_tensor_apply_kernel over one list, its 4 KB structure
 * (110 slots, 320 blocks): each block reads the chunk of 65,536 floats of
 * the slot the structure names for it.
 */
enum { LIST_SLOTS = 110, LIST_BLOCKS = 320, LIST_NUMEL_AT = 8 * LIST_SLOTS, LIST_SLOT_AT = 16 * LIST_SLOTS,
       LIST_CHUNK_AT = LIST_SLOT_AT + LIST_BLOCKS, LIST_BYTES = LIST_CHUNK_AT + 4 * LIST_BLOCKS + 8 };
static const char lists_name[] = "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi1EEE"
				 "NS1_14UnaryOpFunctorIfLi1ELi1ELi0EEEJEEEvT_T0_DpT1_";

static void k_lists(const struct ember_sim_launch *l, void **params)
{
	const unsigned char *meta = params[0];
	for (unsigned b = 0; b < l->grid[0]; b++) {
		const float *x;
		int64_t numel;
		int32_t chunk;
		unsigned char slot = meta[LIST_SLOT_AT + b];
		memcpy(&x, meta + 8 * slot, 8);
		memcpy(&numel, meta + LIST_NUMEL_AT + 8 * slot, 8);
		memcpy(&chunk, meta + LIST_CHUNK_AT + 4 * b, 4);
		int64_t from = (int64_t)chunk * 65536, to = from + 65536 < numel ? from + 65536 : numel;
		SYM(sim, ember_sim_access)(x + from, (size_t)(to - from) * sizeof(float), 0);
	}
}

/*
 * apex's form of it as DeepSpeed's copy passes it: the chunk's elements
 * (an int), the no-op flag's address, then one list of 110 slots with int
 * counts; each block reads the chunk of floats its slot and chunk name.
 */
enum { APEX_NUMEL_AT = 8 * LIST_SLOTS, APEX_SLOT_AT = APEX_NUMEL_AT + 4 * LIST_SLOTS,
       APEX_CHUNK_AT = APEX_SLOT_AT + LIST_BLOCKS, APEX_BYTES = 2928 };
static const char apex_name[] = "_Z25multi_tensor_apply_kernelI18TensorListMetadataILi1EE12ScaleFunctorJfEE"
				"viPViT_T0_DpT1_";

static void k_apex_lists(const struct ember_sim_launch *l, void **params)
{
	int32_t chunk_size = *(const int32_t *)params[0];
	const unsigned char *meta = params[2];
	for (unsigned b = 0; b < l->grid[0]; b++) {
		const float *x;
		int32_t numel, chunk;
		unsigned char slot = meta[APEX_SLOT_AT + b];
		memcpy(&x, meta + 8 * slot, 8);
		memcpy(&numel, meta + APEX_NUMEL_AT + 4 * slot, 4);
		memcpy(&chunk, meta + APEX_CHUNK_AT + 4 * b, 4);
		int64_t from = (int64_t)chunk * chunk_size, to = from + chunk_size < numel ? from + chunk_size : numel;
		SYM(sim, ember_sim_access)(x + from, (size_t)(to - from) * sizeof(float), 0);
	}
}

/*
 * torch.cat's contiguous kernel over halves (OpaqueType<2>, 128 slots,
 * 2,720 bytes: cat_inputs.h): row y reads input y whole, and the rows
 * together write the output as far as its sizes and strides reach.
 */
enum { CAT_SLOTS = 128, CAT_NUMEL_AT = 2048, CAT_BYTES = 2720 };
static const char cat_name[] = "_ZN2at6native12_GLOBAL__N_126CatArrayBatchedCopy_contigINS1_10OpaqueTypeILj2EEEjLi2ELi128E"
			       "Li1EEEvPT_NS1_25CatArrInputTensorMetadataIS5_T0_XT2_EXT3_EEENS1_16TensorSizeStrideIS8_Lj4EEEiS8_";

static void k_cat(const struct ember_sim_launch *l, void **params)
{
	const unsigned char *meta = params[1];
	const uint32_t *shape = params[2]; /* two sizes and their strides, of four each */
	for (unsigned y = 0; y < l->grid[1]; y++) {
		const void *in;
		uint32_t numel;
		memcpy(&in, meta + 8 * y, 8);
		memcpy(&numel, meta + CAT_NUMEL_AT + 4 * y, 4);
		SYM(sim, ember_sim_access)(in, (size_t)numel * 2, 0);
	}
	size_t reach = 1 + (size_t)(shape[0] - 1) * shape[4] + (size_t)(shape[1] - 1) * shape[5];
	SYM(sim, ember_sim_access)(*(void **)params[0], reach * 2, 1);
}

static void start(void)
{
	setenv("EMBER_MODE", "adaptive", 1);
	setenv("EMBER_BUDGET", "64M", 1);
	setenv("EMBER_INTERVAL_MS", "5", 0); /* unless a test asked for no decay */
	setenv("EMBER_SPAN", "8M", 1);
	sim = load_sim();
	shim = load_shim();
	static const size_t one[] = { 8, 8 }, two[] = { 8, 8, 8 }, view[] = { sizeof(struct view) };
	static const size_t scale[] = { 8, 8, 4, 4 }, dp[] = { 8, 4, 4, 4 }, graph[] = { 8, 4, 4 };
	static const size_t list[] = { LIST_BYTES, 1 }; /* the structure, the functor */
	static const size_t apex_list[] = { 4, 8, APEX_BYTES, 1, 4 }; /* the chunk, the flag, the structure, ... */
	static const size_t cat_args[] = { 8, CAT_BYTES, 32, 4, 4 }; /* output, inputs, shape, dimension, stride */
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)("t_touch", k_touch, one, 2), 0);
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)("t_touch4", k_touch4, one, 2), 0);
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)("t_touch4b", k_touch4, one, 2), 0);
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)("t_touch64", k_touch64, one, 2), 0);
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)("t_touch2", k_touch2, two, 3), 0);
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)("t_touch_struct", k_touch_struct, view, 1), 0);
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)("t_scaled", k_scaled, scale, 4), 0);
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)("t_rows", k_rows, dp, 4), 0);
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)("t_frontier", k_frontier, graph, 3), 0);
	/* half_piece(__half const*, unsigned long) */
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)("_Z10half_piecePK6__halfm", k_half, one, 2), 0);
	/* fused(__half const*, fusion, unsigned long) */
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)("_Z5fusedPK6__half6fusionm", k_fused, two, 3), 0);
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)(lists_name, k_lists, list, 2), 0);
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)(apex_name, k_apex_lists, apex_list, 5), 0);
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)(cat_name, k_cat, cat_args, 5), 0);
	CUmodule mod = start_context(shim);
	CU_OK(SYM(shim, cuModuleGetFunction)(&touch, mod, "t_touch"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&touch4, mod, "t_touch4"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&touch4b, mod, "t_touch4b"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&touch64, mod, "t_touch64"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&touch2, mod, "t_touch2"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&touch_struct, mod, "t_touch_struct"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&scaled, mod, "t_scaled"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&rows, mod, "t_rows"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&frontier, mod, "t_frontier"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&half_piece, mod, "_Z10half_piecePK6__halfm"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&fused, mod, "_Z5fusedPK6__half6fusionm"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&lists, mod, lists_name));
	CU_OK(SYM(shim, cuModuleGetFunction)(&apex_lists, mod, apex_name));
	CU_OK(SYM(shim, cuModuleGetFunction)(&cat, mod, cat_name));
}

TestSuite(adaptive, .init = table1_watermarks, .timeout = 60);

static CUdeviceptr managed(size_t bytes)
{
	CUdeviceptr p;
	CU_OK(SYM(shim, cuMemAllocManaged)(&p, bytes, CU_MEM_ATTACH_GLOBAL));
	return p;
}

static void launch(CUfunction f, void **params)
{
	CU_OK(SYM(shim, cuLaunchKernel)(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
}

static void read_range(CUdeviceptr p, size_t bytes)
{
	size_t n = bytes / sizeof(float);
	void *params[] = { &p, &n };
	launch(touch, params);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { 0, (long)ms * 1000000L };
	nanosleep(&ts, NULL);
}

/* Regions of [p, p + bytes) in a state of ember_region_info: 0 mapped, 2 resident. */
static unsigned regions_in_state(CUdeviceptr p, size_t bytes, int state)
{
	unsigned n = 0;
	for (size_t off = 0; off < bytes; off += 2 * MiB) {
		struct ember_region_info info;
		if (SYM(shim, ember_region_info)((void *)(p + off), &info) == 0 && info.state == state)
			n++;
	}
	return n;
}

static unsigned resident_regions(CUdeviceptr p, size_t bytes)
{
	return regions_in_state(p, bytes, 2);
}

static unsigned mapped_regions(CUdeviceptr p, size_t bytes)
{
	return regions_in_state(p, bytes, 0);
}

static void expect_within_budget(void)
{
	uint64_t high = 64 * MiB / 100 * 90;
	cr_expect_leq(SYM(sim, ember_sim_device_peak_resident_bytes)(0), high, "the GPU held more than the budget allows");
}

Test(adaptive, a_hot_allocation_is_promoted_and_a_cold_one_is_not)
{
	start();
	CUdeviceptr hot = managed(16 * MiB), cold = managed(16 * MiB);
	for (int i = 0; i < 40 && resident_regions(hot, 16 * MiB) < 8; i++) {
		read_range(hot, 16 * MiB);
		sleep_ms(5);
	}
	SYM(shim, ember_flush)();
	cr_expect_eq(resident_regions(hot, 16 * MiB), 8);
	cr_expect_eq(resident_regions(cold, 16 * MiB), 0);
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)hot), 0);
	expect_within_budget();
}

Test(adaptive, recovers_from_a_phase_shift)
{
	start();
	CUdeviceptr A = managed(48 * MiB), B = managed(32 * MiB);
	for (int i = 0; i < 30; i++) {
		read_range(A, 48 * MiB);
		sleep_ms(5);
	}
	cr_expect_geq(resident_regions(A, 48 * MiB), 20);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int i = 0;
	for (; i < 400 && resident_regions(B, 32 * MiB) < 16; i++) {
		read_range(B, 32 * MiB);
		sleep_ms(5);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
	cr_log_info("B resident %.3f s after the shift", s);
	cr_expect_eq(resident_regions(B, 32 * MiB), 16, "B took over the GPU");
	cr_expect_lt(s, 2.0);
	SYM(shim, ember_flush)();
	expect_within_budget();
}

/* Precision and recall of the regions the scan credited, against the blocks the kernel touched. */
static void score_scan(const char *pattern, CUdeviceptr buf, size_t bytes, double min_precision, double min_recall)
{
	unsigned credited = 0, touched = 0, both = 0;
	for (size_t off = 0; off < bytes; off += 2 * MiB) {
		struct ember_region_info info;
		cr_assert_eq(SYM(shim, ember_region_info)((void *)(buf + off), &info), 0);
		bool c = info.demand > 0, t = SYM(sim, ember_sim_block_accesses)((void *)(buf + off)) > 0;
		credited += c;
		touched += t;
		both += c && t;
	}
	double precision = credited ? (double)both / credited : 1.0, recall = touched ? (double)both / touched : 1.0;
	cr_log_info("launch scan, %s: precision %.2f, recall %.2f (%u regions credited, %u touched)", pattern,
		    precision, recall, credited, touched);
	cr_expect_geq(precision, min_precision, "%s: precision %.2f", pattern, precision);
	cr_expect_geq(recall, min_recall, "%s: recall %.2f", pattern, recall);
}

Test(adaptive, launch_scan_accuracy)
{
	setenv("EMBER_THRESHOLD", "1000000", 1); /* measure demand only: nothing moves */
	/*
	 * and nothing decays: demand halves every interval, and a simulated
	 * kernel over 64 MiB under TSan outlasted nine 25 ms intervals (CI:
	 * "recall 0.00", every region's demand halved to 0 before it was read)
	 */
	setenv("EMBER_INTERVAL_MS", "3600000", 1);
	start();
	/* a base pointer and a count: the whole array */
	CUdeviceptr a = managed(64 * MiB);
	read_range(a, 64 * MiB);
	score_scan("base pointer, whole array", a, 64 * MiB, 1.0, 1.0);
	/* an interior pointer and a count: a window */
	CUdeviceptr w = managed(64 * MiB);
	read_range(w + 16 * MiB, 8 * MiB);
	score_scan("interior pointer and count (window)", w, 64 * MiB, 1.0, 1.0);
	/* two pointers into one buffer */
	CUdeviceptr two = managed(64 * MiB);
	CUdeviceptr second = two + 32 * MiB;
	size_t n = 8 * MiB / sizeof(float);
	void *params[] = { &two, &second, &n };
	launch(touch2, params);
	score_scan("two pointers into one buffer", two, 64 * MiB, 1.0, 1.0);
	/* a count of 16-byte elements on an interior pointer: taken as 4-byte elements */
	CUdeviceptr q = managed(64 * MiB);
	CUdeviceptr q_at = q + 16 * MiB;
	size_t n16 = 8 * MiB / 16;
	launch(touch4, (void *[]){ &q_at, &n16 });
	score_scan("interior pointer and a count of 16-byte elements", q, 64 * MiB, 1.0, 0.25);
	/* the same, after the same kernel was launched once on a whole array: it learned the size */
	CUdeviceptr whole = managed(32 * MiB), r = managed(64 * MiB);
	size_t n_whole = 32 * MiB / 16;
	launch(touch4b, (void *[]){ &whole, &n_whole });
	CUdeviceptr r_at = r + 16 * MiB;
	launch(touch4b, (void *[]){ &r_at, &n16 });
	score_scan("interior pointer, 16-byte count, after a whole-array launch", r, 64 * MiB, 1.0, 1.0);
	/*
	 * a count of 2-byte halves on an interior pointer, in a kernel whose
	 * mangled name declares __half const*: the program's C++ runtime
	 * (loaded local, as Python loads its modules) demangles it
	 */
	void *runtime = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(runtime, "a C++ runtime to stand for the program's: %s", dlerror());
	CUdeviceptr h = managed(64 * MiB), h_at = h + 16 * MiB;
	size_t nh = 8 * MiB / 2;
	launch(half_piece, (void *[]){ &h_at, &nh });
	score_scan("interior pointer and a count of the halves the kernel's name declares", h, 64 * MiB, 1.0, 1.0);
	/* a base pointer and a count of 64-byte records (k-means' points): the whole array */
	CUdeviceptr pts = managed(64 * MiB);
	size_t npts = 64 * MiB / 64;
	launch(touch64, (void *[]){ &pts, &npts });
	score_scan("base pointer and a count of 64-byte points", pts, 64 * MiB, 1.0, 1.0);
	/* a pointer inside a struct: no count beside it, so it reaches the allocation's end */
	CUdeviceptr s = managed(64 * MiB);
	struct view v = { (const float *)(s + 8 * MiB), 4 * MiB / sizeof(float) };
	void *sparams[] = { &v };
	launch(touch_struct, sparams);
	score_scan("pointer inside a struct", s, 64 * MiB, 0.0, 1.0);
	/* one big buffer of weights (llama.cpp's): a float scale and a -1 beside a weight are not counts */
	CUdeviceptr big = managed(6144 * MiB), weight = big + 64 * MiB; /* room for 1.0f read as 4-byte elements */
	size_t nw = 8 * MiB / sizeof(float);
	float one_f = 1.0f;
	int none = -1;
	launch(scaled, (void *[]){ &weight, &nw, &one_f, &none });
	score_scan("weight in one big buffer, beside a float scale", big, 6144 * MiB, 1.0, 1.0);
	/*
	 * the same kernel's weight at another buffer's base (llama.cpp's
	 * output norm, its buffer's first tensor): a piece like the others,
	 * not the whole buffer, which a kernel that never showed its element
	 * size would be credited (the graph kernel below)
	 */
	CUdeviceptr pool = managed(6144 * MiB);
	launch(scaled, (void *[]){ &pool, &nw, &one_f, &none });
	score_scan("weight at a buffer's base, the kernel's weights seen inside buffers", pool, 6144 * MiB, 1.0, 1.0);
	/* a base pointer, its width and a row count: the whole array, not one row */
	CUdeviceptr dpm = managed(64 * MiB);
	int cols = 4096, nrows = 64 * MiB / sizeof(int) / 4096, penalty = 10;
	launch(rows, (void *[]){ &dpm, &cols, &nrows, &penalty });
	score_scan("base pointer of a 2-D array, width and rows", dpm, 64 * MiB, 1.0, 1.0);
	/* a base pointer and a frontier's length, nothing that bounds the reads: the whole array */
	CUdeviceptr edges = managed(64 * MiB);
	int length = 32, level = 3;
	launch(frontier, (void *[]){ &edges, &length, &level });
	score_scan("base pointer of a graph's edges and a frontier's length", edges, 64 * MiB, 1.0, 1.0);
	/*
	 * PyTorch's tensor lists: 128 blocks over the second half of one
	 * tensor, and the slot after it still naming a tensor of an earlier
	 * launch, as PyTorch leaves it
	 */
	static unsigned char meta[LIST_BYTES];
	CUdeviceptr live = managed(64 * MiB), stale = managed(64 * MiB);
	int64_t numel = 64 * MiB / sizeof(float);
	memcpy(meta, &live, 8);
	memcpy(meta + 8, &stale, 8);
	memcpy(meta + LIST_NUMEL_AT, &numel, 8);
	memcpy(meta + LIST_NUMEL_AT + 8, &numel, 8);
	for (int32_t b = 0; b < 128; b++) {
		int32_t chunk = 128 + b;
		meta[LIST_SLOT_AT + b] = 0;
		memcpy(meta + LIST_CHUNK_AT + 4 * b, &chunk, 4);
	}
	unsigned char functor = 0;
	CU_OK(SYM(shim, cuLaunchKernel)(lists, 128, 1, 1, 512, 1, 1, 0, NULL, (void *[]){ meta, &functor }, NULL));
	score_scan("PyTorch's tensor lists, a launch over half a tensor", live, 64 * MiB, 1.0, 1.0);
	score_scan("PyTorch's tensor lists, a slot an earlier launch left", stale, 64 * MiB, 1.0, 1.0);
	/* the same in apex's form, DeepSpeed's int chunk of 32,768 floats: 256 blocks */
	static unsigned char apex_meta[APEX_BYTES];
	CUdeviceptr apex_live = managed(64 * MiB), apex_stale = managed(64 * MiB), flag = managed(4096);
	int32_t apex_numel = 64 * MiB / sizeof(float), chunk_size = 32768;
	memcpy(apex_meta, &apex_live, 8);
	memcpy(apex_meta + 8, &apex_stale, 8);
	memcpy(apex_meta + APEX_NUMEL_AT, &apex_numel, 4);
	memcpy(apex_meta + APEX_NUMEL_AT + 4, &apex_numel, 4);
	for (int32_t b = 0; b < 256; b++) {
		int32_t chunk = 256 + b;
		apex_meta[APEX_SLOT_AT + b] = 0;
		memcpy(apex_meta + APEX_CHUNK_AT + 4 * b, &chunk, 4);
	}
	float lr = 1e-3f;
	CU_OK(SYM(shim, cuLaunchKernel)(apex_lists, 256, 1, 1, 512, 1, 1, 0, NULL,
					(void *[]){ &chunk_size, &flag, apex_meta, &functor, &lr }, NULL));
	score_scan("apex's tensor lists, a launch over half a tensor", apex_live, 64 * MiB, 1.0, 1.0);
	score_scan("apex's tensor lists, a slot an earlier launch left", apex_stale, 64 * MiB, 1.0, 1.0);
	/*
	 * torch.cat of two [1, 4Mi] half tensors that a caching allocator put
	 * at 0 and 32 MiB of one 64 MiB segment, into a [2, 4Mi] output 16 MiB
	 * into another, a third slot naming an earlier cat's input
	 */
	static unsigned char cat_meta[CAT_BYTES];
	CUdeviceptr segment = managed(64 * MiB), out_segment = managed(64 * MiB), earlier = managed(64 * MiB);
	CUdeviceptr inputs[3] = { segment, segment + 32 * MiB, earlier }, out = out_segment + 16 * MiB;
	uint32_t cat_numel[3] = { 4 * MiB, 4 * MiB, 4 * MiB }, dim_size[2] = { 1, 1 }, offset[2] = { 0, 1 };
	memcpy(cat_meta, inputs, sizeof inputs);
	memcpy(cat_meta + 8 * CAT_SLOTS, offset, sizeof offset);
	memcpy(cat_meta + 12 * CAT_SLOTS, dim_size, sizeof dim_size);
	memcpy(cat_meta + CAT_NUMEL_AT, cat_numel, sizeof cat_numel);
	uint32_t shape[8] = { 2, 4 * MiB, 0, 0, 4 * MiB, 1, 0, 0 };
	int cat_dim = 0;
	uint32_t dim_stride = 4 * MiB;
	CU_OK(SYM(shim, cuLaunchKernel)(cat, 64, 2, 1, 512, 1, 1, 0, NULL,
					(void *[]){ &out, cat_meta, shape, &cat_dim, &dim_stride }, NULL));
	score_scan("torch.cat, two inputs in one segment", segment, 64 * MiB, 1.0, 1.0);
	score_scan("torch.cat, its output inside a segment", out_segment, 64 * MiB, 1.0, 1.0);
	score_scan("torch.cat, a slot an earlier cat left", earlier, 64 * MiB, 1.0, 1.0);
}

/*
 * A graph instantiated before its kernel was ever launched (llama-bench
 * without a prompt captures its first token): its scan of the weight at a
 * buffer's base knew nothing then. The kernel's eager launch inside another
 * buffer teaches that it takes pieces, and the graph's launch after it
 * credits the piece, not the buffer.
 */
Test(adaptive, a_graph_scanned_before_its_kernel_ran_takes_what_launches_taught_since)
{
	setenv("EMBER_THRESHOLD", "1000000", 1); /* measure demand only: nothing moves */
	setenv("EMBER_INTERVAL_MS", "3600000", 1);
	start();
	CUdeviceptr pool = managed(6144 * MiB), other = managed(6144 * MiB), piece = other + 64 * MiB;
	size_t nw = 8 * MiB / sizeof(float);
	float one_f = 1.0f;
	int none = -1;
	void *at_base[] = { &pool, &nw, &one_f, &none };
	CUgraph graph;
	CUgraphExec exec = one_kernel_graph(shim, scaled, at_base, &graph);
	launch(scaled, (void *[]){ &piece, &nw, &one_f, &none });
	CU_OK(SYM(shim, cuGraphLaunch)(exec, NULL));
	CU_OK(SYM(shim, cuCtxSynchronize)());
	score_scan("a graph's weight at a buffer's base, the kernel taught since", pool, 6144 * MiB, 1.0, 1.0);
	CU_OK(SYM(shim, cuGraphExecDestroy)(exec));
	CU_OK(SYM(shim, cuGraphDestroy)(graph));
}

/*
 * A 120 MiB buffer whose first 56 MiB window is resident, filling the
 * budget to its high watermark (every new region needs a victim), and past
 * the arrivals' grace (100 ms): protection is not what these tests test.
 */
static const size_t WINDOW = 56 * MiB, SLIDE = 8 * MiB;

static CUdeviceptr resident_window(void)
{
	start();
	CUdeviceptr buf = managed(120 * MiB);
	for (int i = 0; i < 40 && resident_regions(buf, WINDOW) < 28; i++) {
		read_range(buf, WINDOW);
		sleep_ms(5);
	}
	SYM(shim, ember_flush)();
	cr_assert_eq(resident_regions(buf, WINDOW), 28);
	sleep_ms(120);
	return buf;
}

Test(adaptive, launch_order_follows_a_sliding_window)
{
	CUdeviceptr buf = resident_window();
	const size_t window = WINDOW, step = SLIDE;
	for (unsigned phase = 1; phase <= 6; phase++) {
		CUdeviceptr at = buf + phase * step;
		/*
		 * The launch shows the range moved: the regions it left behind are
		 * demoted on the private stream, the new ones promoted behind them,
		 * and the launch waits for both. Waiting for the left-behind regions
		 * to fall silent would take launches more.
		 */
		read_range(at, window);
		SYM(shim, ember_flush)();
		cr_log_info("phase %u: %u of the window resident, %u of what it left mapped", phase,
			    resident_regions(at, window), mapped_regions(at - step, step));
		cr_expect_eq(resident_regions(at, window), 28, "phase %u: the window is resident after one launch",
			     phase);
		cr_expect_eq(mapped_regions(at - step, step), 4, "phase %u: what it left behind went back", phase);
	}
	expect_within_budget();
}

Test(adaptive, a_sweep_in_chunks_and_a_kernel_per_layer_depart_nothing)
{
	/* a reread in chunks: consecutive launches of one kernel cover adjacent ranges */
	start();
	CUdeviceptr buf = managed(56 * MiB);
	for (int pass = 0; pass < 10; pass++)
		for (size_t off = 0; off < 56 * MiB; off += 8 * MiB)
			read_range(buf + off, 8 * MiB);
	SYM(shim, ember_flush)();
	cr_expect_eq(resident_regions(buf, 56 * MiB), 28, "every chunk stays: the sweep comes back");
	/* one kernel, a buffer per layer: no range slides */
	CUdeviceptr layer[4];
	for (int l = 0; l < 4; l++)
		layer[l] = managed(2 * MiB);
	for (int token = 0; token < 5; token++)
		for (int l = 0; l < 4; l++)
			read_range(layer[l], 2 * MiB);
	SYM(shim, ember_flush)();
	unsigned left = 0;
	for (int l = 0; l < 4; l++)
		left += mapped_regions(layer[l], 2 * MiB);
	cr_log_info("layers left mapped: %u of 4 (the budget is full of the chunked buffer)", left);
	cr_expect_eq(resident_regions(buf, 56 * MiB) + 4 - left, 28, "nothing was evicted for nothing");
}

Test(adaptive, a_driver_error_in_the_middle_of_a_swap_loses_nothing)
{
	CUdeviceptr buf = resident_window();
	const size_t window = WINDOW, step = SLIDE;
	/*
	 * The demotion of what the window left behind fails: the promotions
	 * behind it must not run. Every demotion fails until the checks are
	 * done: the worker's pass may try again at any time, and under load
	 * (ASan, CI) it did, between the flush and the checks.
	 */
	SYM(sim, ember_sim_fail_prefetches)(EMBER_SIM_TO_HOST, 1000000, CUDA_ERROR_UNKNOWN);
	read_range(buf + step, window);
	SYM(shim, ember_flush)();
	cr_expect_eq(resident_regions(buf, step), 4, "what failed to leave is still resident, and accounted");
	cr_expect_eq(resident_regions(buf + window, step), 0, "nothing was promoted into room that never came");
	expect_within_budget();
	SYM(sim, ember_sim_fail_prefetches)(EMBER_SIM_TO_HOST, 0, CUDA_SUCCESS);
	/* the next launch of the window finishes the swap */
	read_range(buf + step, window);
	SYM(shim, ember_flush)();
	cr_expect_eq(resident_regions(buf + step, window), 28);
	cr_expect_eq(mapped_regions(buf, step), 4);
	expect_within_budget();
	size_t free_b, total_b;
	CU_OK(SYM(shim, cuMemGetInfo_v2)(&free_b, &total_b));
	cr_expect_eq(total_b - free_b, 28 * 2 * MiB, "the account holds exactly the resident regions");
}

static void read_range_on(CUdeviceptr p, size_t bytes, CUstream stream)
{
	size_t n = bytes / sizeof(float);
	void *params[] = { &p, &n };
	CU_OK(SYM(shim, cuLaunchKernel)(touch, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL));
}

Test(adaptive, streams_keep_their_own_launch_order)
{
	/*
	 * Two streams run one kernel over two buffers, taking turns: each
	 * launch jumps between buffers, and no range slides. Only on one
	 * stream does the window move, and only what it left behind departs.
	 */
	start();
	CUstream s1, s2;
	CU_OK(SYM(shim, cuStreamCreate)(&s1, CU_STREAM_NON_BLOCKING));
	CU_OK(SYM(shim, cuStreamCreate)(&s2, CU_STREAM_NON_BLOCKING));
	CUdeviceptr a = managed(64 * MiB), b = managed(16 * MiB);
	/* until both are in: ten times the tries an idle machine needs, for a loaded one */
	for (int i = 0; i < 400 && resident_regions(a, 40 * MiB) + resident_regions(b, 16 * MiB) < 28; i++) {
		read_range_on(a, 40 * MiB, s1);
		read_range_on(b, 16 * MiB, s2);
		sleep_ms(5);
	}
	SYM(shim, ember_flush)();
	cr_assert_eq(resident_regions(a, 40 * MiB) + resident_regions(b, 16 * MiB), 28);
	sleep_ms(120);
	read_range_on(b, 16 * MiB, s2);
	read_range_on(a + 8 * MiB, 40 * MiB, s1); /* stream 1's window slides by 8 MiB */
	read_range_on(b, 16 * MiB, s2);
	SYM(shim, ember_flush)();
	cr_expect_eq(resident_regions(a + 8 * MiB, 40 * MiB), 20, "the slid window is resident");
	cr_expect_eq(mapped_regions(a, 8 * MiB), 4, "what it left behind went back");
	cr_expect_eq(resident_regions(b, 16 * MiB), 8, "the other stream's buffer stayed");
	expect_within_budget();
}

/*
 * A launch that repeats its thread's last one is placed from the kept scan
 * (launch_repeat.h). Each is still credited: ten launches over a buffer
 * earn ten times the demand of one, with nothing decaying or moving.
 */
static uint32_t demand_at(CUdeviceptr p)
{
	struct ember_region_info info;
	cr_assert_eq(SYM(shim, ember_region_info)((void *)p, &info), 0);
	return info.demand;
}

static void start_measuring_demand(void)
{
	setenv("EMBER_THRESHOLD", "1000000", 1); /* nothing moves */
	setenv("EMBER_INTERVAL_MS", "3600000", 1); /* nothing decays */
	start();
}

/*
 * llama.cpp's fused gate-and-up product in one buffer of weights: gate at
 * 8 MiB, up behind it at 12 MiB, down at 20 MiB (4 MiB of halves each),
 * the product's own weight at 32 MiB. The gate pointer, in a structure,
 * has no type: at four bytes an element its count takes it through up.
 * Under EMBER_PIECES it ends where up begins, since another launch passed
 * up's pointer; without, up is credited by both launches, twice what down
 * is by its own. A C kernel's window, whose pointer no name declares,
 * keeps its count across a piece that begins inside it.
 */
static void fused_gate_and_up(bool pieces)
{
	if (pieces)
		setenv("EMBER_PIECES", "1", 1);
	start_measuring_demand();
	/* the names' declarations, read by the program's C++ runtime, as in launch_scan_accuracy */
	cr_assert_not_null(dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL), "a C++ runtime: %s", dlerror());
	CUdeviceptr pool = managed(64 * MiB), gate = pool + 8 * MiB, up = pool + 12 * MiB, down = pool + 20 * MiB;
	CUdeviceptr x = pool + 32 * MiB;
	size_t n = 4 * MiB / 2;
	/* down's product, then up's: the piece at 12 MiB is learned after the one at 20 MiB beyond it */
	launch(half_piece, (void *[]){ &down, &n });
	launch(half_piece, (void *[]){ &up, &n });
	struct fusion f = { (const void *)(uintptr_t)gate };
	launch(fused, (void *[]){ &x, &f, &n });
	cr_expect_gt(demand_at(gate), 0, "the gate is credited");
	cr_expect_eq(demand_at(up + 2 * MiB), (pieces ? 1 : 2) * demand_at(down),
		     "up against down: %u against %u", demand_at(up + 2 * MiB), demand_at(down));
	CUdeviceptr window = pool + 40 * MiB, inside = pool + 44 * MiB;
	size_t n4 = 4 * MiB / sizeof(float), n8 = 8 * MiB / sizeof(float);
	launch(touch, (void *[]){ &inside, &n4 });
	launch(touch, (void *[]){ &window, &n8 });
	cr_expect_eq(demand_at(pool + 46 * MiB), 2 * demand_at(pool + 40 * MiB),
		     "a C kernel's window keeps its count past the piece inside it");
	unsetenv("EMBER_PIECES");
}

Test(adaptive, a_guessed_extent_runs_into_the_next_piece)
{
	fused_gate_and_up(false);
}

Test(adaptive, a_guessed_extent_ends_at_the_next_piece_under_pieces)
{
	fused_gate_and_up(true);
}

Test(adaptive, every_repeated_launch_is_credited)
{
	start_measuring_demand();
	CUdeviceptr once = managed(16 * MiB), ten = managed(16 * MiB);
	read_range(once, 16 * MiB);
	for (int i = 0; i < 10; i++)
		read_range(ten, 16 * MiB);
	cr_assert_gt(demand_at(once), 0);
	cr_expect_eq(demand_at(ten), 10 * demand_at(once));
	cr_expect_eq(demand_at(ten + 14 * MiB), 10 * demand_at(once), "the last region too");
}

/*
 * A launch over allocations that are all resident, with the GPU below its
 * low watermark, has nothing to decide and counts no demand; once the
 * GPU is past the low watermark, the same launches count again.
 */
Test(adaptive, demand_waits_until_there_is_something_to_decide)
{
	start_measuring_demand();
	CUdeviceptr hot = managed(16 * MiB), big = managed(48 * MiB);
	cr_assert_gt(SYM(shim, ember_promote)((void *)hot, 16 * MiB), 0);
	SYM(shim, ember_flush)();
	cr_assert_eq(resident_regions(hot, 16 * MiB), 8);
	uint32_t before = demand_at(hot);
	for (int i = 0; i < 5; i++)
		read_range(hot, 16 * MiB);
	cr_expect_eq(demand_at(hot), before, "resident, 16 MiB of a 64 MiB budget: nothing counted");
	cr_assert_gt(SYM(shim, ember_promote)((void *)big, 48 * MiB), 0); /* to the high watermark, past the low */
	SYM(shim, ember_flush)();
	for (int i = 0; i < 5; i++)
		read_range(hot, 16 * MiB);
	cr_expect_gt(demand_at(hot), before, "past the low watermark the launches count again");
}

/*
 * Weights read while the budget had room (launches with nothing to decide
 * credit nothing, policy.h) keep their place at the first pressure: an
 * array read twice 150 ms apart finds them named 150 ms before its second
 * read, within two of its gaps, so they are not older. Counted from their
 * one credited touch, 550 ms before, they would give way.
 */
Test(adaptive, what_launches_named_while_there_was_room_keeps_its_place_at_the_first_pressure)
{
	start();
	CUdeviceptr w = managed(16 * MiB);
	read_range(w, 16 * MiB); /* mapped: credited and promoted */
	SYM(shim, ember_flush)();
	cr_assert_eq(resident_regions(w, 16 * MiB), 8);
	for (int i = 0; i < 8; i++) { /* resident, 16 MiB of 64: nothing to decide */
		sleep_ms(50);
		read_range(w, 16 * MiB);
	}
	CUdeviceptr m = managed(48 * MiB);
	read_range(m, 48 * MiB); /* the room to the high watermark fills; its reuse gap is not known yet */
	SYM(shim, ember_flush)();
	sleep_ms(150);
	read_range(m, 48 * MiB);
	sleep_ms(100); /* the worker's passes */
	SYM(shim, ember_flush)();
	cr_expect_eq(resident_regions(w, 16 * MiB), 8, "the weights gave way: %u of 8 regions resident",
		     resident_regions(w, 16 * MiB));
	cr_expect_geq(resident_regions(m, 48 * MiB), 20, "the new array filled the room");
	expect_within_budget();
}

/*
 * The same argument bytes before and after an allocation is made where
 * they point: the launch after it finds the allocation. The pointers sit
 * every 2 MiB over a freed 16 MiB buffer, so that an allocation made in
 * its place is under one of them wherever in the hole it starts.
 */
struct spread {
	CUdeviceptr at[8];
};

static void k_nothing(const struct ember_sim_launch *l, void **params)
{
}

Test(adaptive, a_repeat_finds_an_allocation_made_since)
{
	start_measuring_demand();
	static const size_t spread_params[] = { sizeof(struct spread) };
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)("t_nothing", k_nothing, spread_params, 1), 0);
	CUmodule mod;
	CUfunction nothing;
	CU_OK(SYM(shim, cuModuleLoadData)(&mod, "ember-sim:"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&nothing, mod, "t_nothing"));
	managed(2 * MiB); /* something placed: a launch is scanned at all */
	CUdeviceptr gone = managed(16 * MiB);
	CU_OK(SYM(shim, cuMemFree_v2)(gone));
	struct spread s;
	for (int i = 0; i < 8; i++)
		s.at[i] = gone + (CUdeviceptr)i * 2 * MiB;
	launch(nothing, (void *[]){ &s });
	launch(nothing, (void *[]){ &s }); /* a repeat: it references nothing */
	CUdeviceptr fresh = managed(4 * MiB);
	if (fresh < gone || fresh >= gone + 16 * MiB)
		cr_skip_test("the simulated driver put the new allocation elsewhere");
	launch(nothing, (void *[]){ &s });
	cr_expect_gt(demand_at(fresh), 0, "the launch after the allocation did not find it");
}

/* Threads keep their own launches: two repeating at once are each credited in full (and TSan watches). */
struct repeater {
	CUcontext ctx;
	CUdeviceptr p;
};

static void *repeat_reads(void *arg)
{
	struct repeater *r = arg;
	CU_OK(SYM(shim, cuCtxSetCurrent)(r->ctx));
	for (int i = 0; i < 10; i++)
		read_range(r->p, 16 * MiB);
	return NULL;
}

Test(adaptive, repeats_on_two_threads_are_each_credited)
{
	start_measuring_demand();
	CUcontext ctx;
	CU_OK(SYM(shim, cuCtxGetCurrent)(&ctx));
	CUdeviceptr once = managed(16 * MiB);
	read_range(once, 16 * MiB);
	struct repeater r[2] = { { ctx, managed(16 * MiB) }, { ctx, managed(16 * MiB) } };
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, repeat_reads, &r[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++)
		cr_expect_eq(demand_at(r[i].p), 10 * demand_at(once), "thread %d", i);
}

/*
 * A launch passed two base pointers and nothing that bounds them: each
 * whole allocation is its extent, and each region of the smaller is
 * credited as many times more as it is smaller, up to EMBER_DENSITY_MAX
 * (the star queries' dimension tables beside their fact columns).
 */
Test(adaptive, a_launch_credits_each_region_of_a_smaller_array_more)
{
	start_measuring_demand();
	static const size_t pair_params[] = { 8, 8 };
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)("t_pair", k_nothing, pair_params, 2), 0);
	CUmodule mod;
	CUfunction pair;
	CU_OK(SYM(shim, cuModuleLoadData)(&mod, "ember-sim:"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&pair, mod, "t_pair"));
	CUdeviceptr big = managed(32 * MiB), small = managed(2 * MiB);
	launch(pair, (void *[]){ &big, &small });
	cr_assert_gt(demand_at(big), 0);
	cr_expect_eq(demand_at(small), 16 * demand_at(big), "16 times smaller, 16 times the demand per region");
	cr_expect_eq(demand_at(big + 30 * MiB), demand_at(big), "the large array's regions alike");
	CUdeviceptr huge = managed(160 * MiB), tiny = managed(2 * MiB);
	launch(pair, (void *[]){ &huge, &tiny });
	cr_expect_eq(demand_at(tiny), 64 * demand_at(huge), "80 times smaller: at most 64 times");
}
