/*
 * The launch scan: which placed allocations a kernel launch references.
 *
 * The argument buffer is read with each parameter's offset and size from
 * cuFuncGetParamInfo (cached per function). Every 8-byte-aligned word of
 * every parameter of 8 bytes or more is a candidate pointer, so pointers
 * inside structures (PyTorch's TensorIterator arguments, for one) count
 * too, and interior pointers find their allocation. PyTorch's tensor
 * lists are read by the chunks the launch's blocks name instead
 * (tensor_lists.h), and torch.cat's inputs by its block rows (cat_inputs.h).
 */
#ifndef EMBER_LAUNCH_SCAN_H
#define EMBER_LAUNCH_SCAN_H

#include <cuda.h>

#include "kernel_types.h"
#include "launch_order.h"
#include "regions.h"

enum { EMBER_SCAN_MAX_REFS = 32, EMBER_SCAN_MAX_PTRS = 64, EMBER_SCAN_MAX_SCALARS = 32 };
/* the arguments learned per kernel: as many as its name's declarations cover (32) */
enum { EMBER_SCAN_LEARNED = EMBER_DECLARED_PARAMS };
enum { EMBER_SCAN_KEPT_PARAMS = 32, EMBER_SCAN_KEPT_BYTES = 512 };

/* A launch's blocks in x and y: what a structure argument is read up to (tensor lists in x, cat's inputs in y). */
struct ember_grid {
	unsigned x, y;
};

/* A launch's argument bytes, kept so that its repeats are recognised (launch_repeat.h). */
struct ember_scan_args {
	bool kept;      /* false: more or larger arguments than are kept, or none read */
	bool packed;    /* one packed buffer (extra), else kernelParams */
	unsigned n;     /* kernelParams: how many */
	uint32_t len;   /* bytes in bytes[] */
	uint16_t size[EMBER_SCAN_KEPT_PARAMS]; /* kernelParams: each one's size */
	unsigned char bytes[EMBER_SCAN_KEPT_BYTES];
};


struct ember_scan {
	struct ember_alloc *allocs[EMBER_SCAN_MAX_REFS]; /* distinct allocations, each holding a reference */
	unsigned n;
	struct {
		struct ember_alloc *alloc; /* one of allocs[] */
		uint64_t addr;
		uint64_t bytes;            /* what the arguments say it covers (a tensor list's chunks); 0: not said */
		unsigned param;            /* the argument it came from */
	} ptrs[EMBER_SCAN_MAX_PTRS]; /* every pointer into them, in argument order */
	unsigned nptrs;
	uint64_t scalars[EMBER_SCAN_MAX_SCALARS]; /* 4- and 8-byte arguments that are not pointers */
	unsigned nscalars;
	CUfunction f;
	uint32_t kernel_number; /* f's number in order of first sight (EMBER_TRACE), UINT32_MAX if unknown */
	/* per argument: the element size earlier launches of f showed (0: unknown) */
	uint8_t elem_size[EMBER_SCAN_LEARNED];
	/* per argument: the element size f's mangled name declares, and which it reads only (kernel_types.h) */
	struct ember_declared declared;
	uint32_t newly_learned; /* bit per argument: learned by this launch, to be kept */
	uint32_t inside;        /* bit per argument: earlier launches of f passed it pointing inside an allocation */
	uint32_t newly_inside;  /* bit per argument: this launch showed it so, to be kept */
	/* per argument: the range the previous launch of f on this stream covered, and this one's */
	struct ember_range prev[EMBER_SCAN_LEARNED], range[EMBER_SCAN_LEARNED];
	uint32_t prev_known;   /* bit per argument: prev[] is set */
	uint32_t newly_ranged; /* bit per argument: range[] to be kept */
	uint64_t stream_key;   /* the launch's stream (per thread, for a per-thread default stream) */
	bool fresh_demand;     /* the monitor credited new demand (not only repeats, policy.h) */
	uint64_t extent[EMBER_SCAN_MAX_PTRS]; /* the monitor's: bytes each pointer covers (monitor.h) */
	uint64_t table_gen;    /* the table's next_id when scanned: no allocation was made since while it is the same */
	bool repeat;           /* the kept scan of this thread's last launch, which this one repeats (launch_repeat.h) */
	bool overflowed;       /* it pointed into more allocations than allocs[] holds: the rest are not credited */
};

/* Scan a launch of these blocks; the caller must ember_scan_release() the result. */
void ember_scan_launch(CUfunction f, struct ember_grid grid, void **kernel_params, void **extra,
		       struct ember_scan *out);

/*
 * The same into a scan that may hold an earlier launch's references
 * (out->n of them; none after ember_scan_release or zeroing), which are
 * dropped in the same hold of the table lock, and keeping the argument
 * bytes in *args unless it is NULL (args->kept says whether they fitted).
 */
void ember_scan_launch_keeping(CUfunction f, struct ember_grid grid, void **kernel_params, void **extra,
			       struct ember_scan *out, struct ember_scan_args *args);

/* Whether a launch's arguments are the bytes args kept. */
bool ember_scan_args_same(const struct ember_scan_args *args, void **kernel_params, void **extra);
void ember_scan_release(struct ember_scan *s);

/* Launches (and graph kernel nodes) whose arguments pointed into more than EMBER_SCAN_MAX_REFS allocations. */
uint64_t ember_scan_overflows(void);

/* Launches (and graph kernel nodes) whose tensor-list argument was read block by block (tensor_lists.h). */
uint64_t ember_scan_tensor_lists(void);

/* Launches (and graph kernel nodes) of torch.cat whose inputs were read by the block rows (cat_inputs.h). */
uint64_t ember_scan_cat_inputs(void);

/*
 * Keep a scan past its launch (a graph's kernel, replayed later): drop its
 * references, keeping addresses. ember_scan_rebind finds the allocations
 * again, as they are now, taking references; release it as usual.
 */
void ember_scan_unbind(struct ember_scan *s);
void ember_scan_rebind(struct ember_scan *s);

/*
 * The key of a launch's stream: the handle, or the thread for a per-thread
 * default stream. CU_STREAM_LEGACY and CU_STREAM_PER_THREAD get the keys of
 * the streams they name, so that one stream has one key in the launch
 * history, the busy streams and a trace's L lines.
 */
uint64_t ember_scan_stream_key(CUstream stream, bool per_thread);

#endif
