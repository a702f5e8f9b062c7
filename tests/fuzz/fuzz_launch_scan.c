/*
 * libFuzzer: the launch-argument scanner and the access monitor behind it
 * (shim/signal/launch_scan.c, kernels.c, monitor.c and the policy), with
 * the driver's parameter layouts made up by the input, kernels "unloaded"
 * and their handles reused with other layouts, as a module reload does.
 *
 * The input is a few allocations, then operations:
 *   'D' h n size...   kernel handle h gets n parameters of the given sizes
 *                     (its module is loaded: the driver answers with these)
 *   'U' m             module m % 3 is unloaded: 0 and 1 each hold two of the
 *                     kernels (one of which, a library's kernel handle, names
 *                     no module), 2 stands for a library's unload or a
 *                     context's teardown, which unload every kernel (the
 *                     shim's hooks forget as they do)
 *   'L' h bytes...    launch h: each parameter's bytes from the input, an
 *                     8-byte one taken as a pointer into an allocation when
 *                     its first byte is odd (allocation, offset follow),
 *                     then two bytes of the grid's blocks in x, the
 *                     stream, EMBER_PIECES and a byte of its rows in y
 * A launch reads exactly the parameters the driver says the kernel has
 * now; ASan catches a scan that trusts an older layout.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "kernels.h"
#include "launch_scan.h"
#include "monitor.h"
#include "shim.h"

enum { KERNELS = 7, MAX_PARAMS = 24, ALLOCS = 4 };

/* What the shim's other parts provide, made small. */
void *volatile ember_slot_table[EMBER_SLOT_COUNT];
pthread_mutex_t ember_lock_layouts = PTHREAD_MUTEX_INITIALIZER;
static struct ember_accounts accounts;
struct ember_table ember_shim_table;
struct ember_policy_ctx ember_shim_ctx;

/* The scan says once when a launch points past the allocations it holds: nothing to say here. */
void ember_log(enum ember_log_level level, const char *fmt, ...)
{
	(void)level;
	(void)fmt;
}

/* The made-up driver: the current layout of each kernel handle. */
static struct {
	unsigned n;
	uint32_t size[MAX_PARAMS];
	bool loaded;
} kernel[KERNELS];

static CUfunction handle(unsigned h)
{
	return (CUfunction)(uintptr_t)(0x1000 + 64 * h);
}

static CUresult CUDAAPI param_info(CUfunction f, size_t index, size_t *offset, size_t *size)
{
	unsigned h = (unsigned)(((uintptr_t)f - 0x1000) / 64);
	if (h >= KERNELS || !kernel[h].loaded || index >= kernel[h].n)
		return CUDA_ERROR_INVALID_VALUE;
	size_t off = 0;
	for (size_t i = 0; i < index; i++)
		off += kernel[h].size[i];
	*offset = off;
	*size = kernel[h].size[index];
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI kernel_param_info(CUkernel k, size_t index, size_t *offset, size_t *size)
{
	return param_info((CUfunction)k, index, offset, size);
}

/*
 * Each handle's name: a C kernel's, mangled ones that declare halves,
 * floats and doubles, and void, PyTorch's multi-tensor kernel taking the
 * 4 KB form of a one-list structure (3,368 bytes: tensor_lists.h),
 * apex's taking its one-list structure third (2,928 bytes), and torch.cat's
 * taking 128 inputs second (2,720 bytes) and its output's shape third (32:
 * cat_inputs.h).
 */
static const char tensor_lists_kernel[] = "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorList"
					  "MetadataILi1ELb0EEENS1_14UnaryOpFunctorIfLi1ELi1ELi0EEEJEEEvT_T0_DpT1_";
static const char apex_kernel[] = "_Z25multi_tensor_apply_kernelI18TensorListMetadataILi1EE12ScaleFunctorJfEEvxPViT_T0_DpT1_";
static const char cat_kernel[] = "_ZN2at6native12_GLOBAL__N_126CatArrayBatchedCopy_contigINS1_10OpaqueTypeILj2EEEjLi2ELi128E"
				 "Li1EEEvPT_NS1_25CatArrInputTensorMetadataIS5_T0_XT2_EXT3_EEENS1_16TensorSizeStrideIS8_Lj4EEEiS8_";

static CUresult CUDAAPI func_name(const char **name, CUfunction f)
{
	static const char *const names[KERNELS] = { "t_plain", "_Z1kPK6__halfmi", "_Z1kPfPdPcm", "_Z1kPvS_",
						    tensor_lists_kernel, apex_kernel, cat_kernel };
	unsigned h = (unsigned)(((uintptr_t)f - 0x1000) / 64);
	if (h >= KERNELS || !kernel[h].loaded)
		return CUDA_ERROR_INVALID_VALUE;
	*name = names[h];
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI kernel_name(const char **name, CUkernel k)
{
	return func_name(name, (CUfunction)k);
}

/* Kernels 0, 2, 4 and 6 are module 0's, 1 and 5 module 1's; 3, a library's kernel handle, names no module. */
enum { LIBRARY_KERNEL = 3 };

static CUmodule module(unsigned h)
{
	return (CUmodule)(uintptr_t)(0x100 + h % 2);
}

static CUresult CUDAAPI func_module(CUmodule *m, CUfunction f)
{
	unsigned h = (unsigned)(((uintptr_t)f - 0x1000) / 64);
	if (h >= KERNELS || !kernel[h].loaded || h == LIBRARY_KERNEL)
		return CUDA_ERROR_INVALID_HANDLE;
	*m = module(h);
	return CUDA_SUCCESS;
}

/* libFuzzer's one-time setup, before the first input */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	ember_slot_table[EMBER_SLOT_cuFuncGetParamInfo] = (void *)param_info;
	ember_slot_table[EMBER_SLOT_cuKernelGetParamInfo] = (void *)kernel_param_info;
	ember_slot_table[EMBER_SLOT_cuFuncGetName] = (void *)func_name;
	ember_slot_table[EMBER_SLOT_cuKernelGetName] = (void *)kernel_name;
	ember_slot_table[EMBER_SLOT_cuFuncGetModule] = (void *)func_module;
	fuzz_policy_init(&accounts);
	return 0;
}

static void launch(struct input *in, uint64_t *bases, const uint64_t *sizes, unsigned nallocs, uint64_t now)
{
	unsigned h = take(in) % KERNELS;
	if (!kernel[h].loaded)
		return;
	/* the array and each parameter's buffer exactly their size: reading past one is an ASan report */
	unsigned n = kernel[h].n;
	void **params = calloc(n ? n : 1, sizeof *params);
	if (!params)
		return;
	for (unsigned i = 0; i < n; i++) {
		uint32_t sz = kernel[h].size[i];
		uint8_t *b = malloc(sz);
		if (!b)
			break;
		for (uint32_t k = 0; k < sz; k++)
			b[k] = (uint8_t)take(in);
		if (sz == 8 && (b[0] & 1) && nallocs) {
			unsigned a = b[1] % nallocs;
			uint64_t off, p;
			memcpy(&off, b, 8);
			off = (off >> 16) % (sizes[a] + 1);
			p = bases[a] + off;
			memcpy(b, &p, 8);
		}
		params[i] = b;
	}
	struct ember_scan scan;
	struct ember_grid grid = { take(in), 0 };
	grid.x |= (unsigned)take(in) << 8; /* a tensor list's blocks are read up to it */
	uint64_t stream_key = take(in) % 3;
	ember_shim_ctx.params.pieces = take(in) & 1; /* EMBER_PIECES's pools and the default, launch by launch */
	grid.y = take(in); /* cat's rows: taken last, so that a launch's other bytes read as before */
	ember_scan_launch(handle(h), grid, params, NULL, &scan);
	scan.stream_key = stream_key;
	ember_table_lock(&ember_shim_table);
	ember_monitor_launch(&scan, now);
	ember_table_unlock(&ember_shim_table);
	ember_monitor_learn(&scan);
	ember_scan_release(&scan);
	for (unsigned i = 0; i < n; i++)
		free(params[i]);
	free(params);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	memset(kernel, 0, sizeof kernel);
	ember_kernels_forget();
	ember_table_reset(&ember_shim_table);
	uint64_t bases[ALLOCS], sizes[ALLOCS];
	unsigned nallocs = take(&in) % (ALLOCS + 1);
	for (unsigned i = 0; i < nallocs; i++) {
		/* 1 byte to 1 GiB, 2^40 apart */
		unsigned shift = take(&in) % 31;
		sizes[i] = (1ull << shift) + take(&in);
		bases[i] = (uint64_t)(i + 1) << 40;
		if (!ember_table_insert(&ember_shim_table, bases[i], sizes[i], 0, EMBER_ALLOC_MANAGED))
			nallocs = i;
	}
	uint64_t now = 1000000000;
	while (in.left) {
		switch (take(&in)) {
		case 'D': {
			unsigned h = take(&in) % KERNELS, n = take(&in) % (MAX_PARAMS + 1);
			static const uint32_t sizes_of[] = { 4, 8, 1, 2, 16, 24, 32, 64, 3368, 2928, 2720 };
			if (kernel[h].loaded)
				break; /* a loaded kernel keeps its layout until its module goes */
			kernel[h].n = n;
			for (unsigned i = 0; i < n; i++)
				kernel[h].size[i] = sizes_of[take(&in) % (sizeof sizes_of / sizeof sizes_of[0])];
			kernel[h].loaded = true;
			break;
		}
		case 'U': {
			unsigned m = take(&in) % 3; /* what the cuModuleUnload and cuLibraryUnload hooks do */
			for (unsigned h = 0; h < KERNELS; h++)
				if (m == 2 || (h != LIBRARY_KERNEL && module(h) == module(m)))
					kernel[h].loaded = false;
			if (m == 2)
				ember_kernels_forget();
			else
				ember_kernels_forget_module(module(m));
			break;
		}
		case 'L':
			launch(&in, bases, sizes, nallocs, now);
			now += 1000 * take(&in) * take(&in);
			break;
		default:
			break;
		}
	}
	return 0;
}
