/*
 * What the simulated driver's parts share.
 *
 * Everything here is hidden (the target's visibility preset); only the
 * driver's cu* names (SIM_EXPORT) and ember_sim.h's test API leave the
 * library.
 *
 * Locks, each guarding its own tables:
 *   sim_ctx_lock      primary contexts' reference counts and flags
 *   sim_code_lock     registered kernels, modules' function lists
 *   sim_handles_lock  the table of live handles
 *   sim_mem_lock      allocations, managed blocks, device accounting
 *   sim_time_lock     streams' and contexts' virtual completion times
 * Where one is taken while another is held, the order is the one above;
 * the fork handlers take them all in that order (init.c).
 */
#ifndef EMBER_SIM_INTERNAL_H
#define EMBER_SIM_INTERNAL_H

#include <cuda.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember_sim.h"

#define SIM_EXPORT __attribute__((visibility("default")))

/* Most simulated GPUs; EMBER_SIM_DEVICES is clamped to this. */
#define SIM_MAX_DEVICES 8
/* The driver version cuDriverGetVersion reports: CUDA 13.0. */
#define SIM_DRIVER_VERSION 13000
/* Stream priorities, as an H200 reports them: lower numbers are more urgent. */
#define SIM_PRIORITY_LEAST 0
#define SIM_PRIORITY_GREATEST (-5)

#define SIM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SIM_MAX(a, b) ((a) > (b) ? (a) : (b))

/* ---- init.c: process-wide state ---- */

struct sim_globals {
	unsigned devices;        /* the GPUs the process sees: EMBER_SIM_DEVICES under CUDA_VISIBLE_DEVICES */
	uint64_t device_memory;  /* EMBER_SIM_MEMORY, per device */
	unsigned physical_devices;          /* EMBER_SIM_DEVICES */
	int physical[SIM_MAX_DEVICES];      /* ordinal -> the simulated GPU it is (its PCI bus id, its UUID) */
	bool hazards;                       /* EMBER_SIM_HAZARDS (hazard.c) */
};
extern struct sim_globals sim_globals;

/* visible.c: CUDA_VISIBLE_DEVICES over `physical` GPUs; fills map (ordinal -> GPU), returns how many. */
unsigned sim_visible_setup(unsigned physical, int *map);
/* device.c: physical GPU g's UUID; visible.c: as nvidia-smi prints it, "GPU-xxxxxxxx-xxxx-...". */
void sim_physical_uuid(CUuuid *uuid, int physical);
void sim_device_uuid_text(char *out, size_t len, int physical);

struct sim_stream;
/*
 * hazard.c, under EMBER_SIM_HAZARDS: work on stream s, from start to end in
 * virtual time (what: "a launch", "a copy", "a memset"), wrote or read
 * [p, p + bytes); reported where another stream's work on that allocation
 * may still run.
 */
void sim_hazard_note(uintptr_t p, size_t bytes, bool write, const struct sim_stream *s, uint64_t start,
		     uint64_t end, const char *what);
void sim_hazards_setup(void);

/* Loads the configuration, once. */
void sim_setup(void);

/* The error a test asked this call of `name` to fail with (inject.c), or CUDA_SUCCESS. */
CUresult sim_injected(const char *name);
#define SIM_INJECT(name)                                        \
	do {                                                    \
		CUresult injected_ = sim_injected(name);        \
		if (injected_ != CUDA_SUCCESS)                  \
			return injected_;                       \
	} while (0)
/* True once cuInit has succeeded. */
bool sim_initialized(void);

#define SIM_REQUIRE_INIT()                                                                 \
	do {                                                                               \
		if (!sim_initialized())                                                    \
			return CUDA_ERROR_NOT_INITIALIZED;                                 \
	} while (0)

extern pthread_mutex_t sim_ctx_lock, sim_code_lock, sim_handles_lock, sim_mem_lock,
	sim_time_lock;

/* ---- device.c ---- */

bool sim_device_valid(CUdevice dev);

/* ---- handles.c: which handles are alive, and who owns them ---- */

enum sim_handle_kind {
	SIM_H_CTX,
	SIM_H_STREAM,
	SIM_H_EVENT,
	SIM_H_MODULE,
	SIM_H_LIBRARY,
	SIM_H_FUNC,
	SIM_H_GRAPH_EXEC, /* owned by the context it was instantiated in */
	SIM_H_PHYSICAL,   /* a cuMemCreate allocation (vmm.c): owned by no context */
};

struct sim_ctx;

void sim_handle_add(enum sim_handle_kind kind, const void *h, struct sim_ctx *owner);
bool sim_handle_valid(enum sim_handle_kind kind, const void *h);
/* False when h was not a live handle of that kind. */
bool sim_handle_remove(enum sim_handle_kind kind, const void *h);
/* Unregisters every handle of a kind owned by ctx, then calls destroy on each. */
void sim_handles_drain(enum sim_handle_kind kind, struct sim_ctx *owner, void (*destroy)(void *));

/* ---- stream.c: streams and their virtual completion times ---- */

enum sim_stream_kind { SIM_STREAM_USER, SIM_STREAM_LEGACY, SIM_STREAM_PER_THREAD };

struct sim_stream {
	struct sim_ctx *ctx;
	enum sim_stream_kind kind;
	unsigned flags;    /* CU_STREAM_DEFAULT or CU_STREAM_NON_BLOCKING */
	int priority;
	uint64_t done_ns;  /* when the last operation queued on it completes (sim_time_lock) */
	CUgraph capture;   /* the graph its launches are recorded into while it captures (capture.c), else NULL */
	CUstreamCaptureMode capture_mode; /* the mode its capture began in */
	unsigned capture_thread;          /* the thread that began it (capture.c's numbering) */
	bool capture_broken;              /* an unsafe call invalidated it: it ends with an error */
	/* drawn into another stream's capture by waiting for an event recorded there (a fork, capture.c) */
	struct sim_stream *capture_origin; /* the stream that began the capture, else NULL */
	uint64_t capture_work;             /* operations queued on it since it was drawn in */
	bool capture_unjoined;             /* work the capture's other streams have not waited for */
};

/* Where an event was recorded during a capture (capture.c), for the stream that waits for it. */
struct sim_capture_mark {
	CUgraph graph;             /* the capture's graph, else NULL: recorded outside any */
	struct sim_stream *from;   /* the stream it was recorded in */
	uint64_t work;             /* from's capture_work then */
};

/*
 * A potentially unsafe call while streams capture (capture.c): CUDA_SUCCESS
 * where the calling thread may make it, else CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
 * with the captures it offends invalidated, as the driver's rules for
 * global, thread-local and relaxed modes say.
 */
CUresult sim_capture_unsafe_call(void);
#define SIM_UNSAFE_DURING_CAPTURE()                                 \
	do {                                                        \
		CUresult capture_r_ = sim_capture_unsafe_call();    \
		if (capture_r_ != CUDA_SUCCESS)                     \
			return capture_r_;                          \
	} while (0)
/* Whether s's capture was invalidated; its launches then fail. */
bool sim_capture_broken(struct sim_stream *s);
/* s is destroyed: its capture, if any, with it. */
void sim_capture_forget(struct sim_stream *s);
/* Work is about to be recorded into s's capture: refused once the capture was invalidated, else noted. */
CUresult sim_capture_admit(struct sim_stream *s);
/* An operation was queued on s: if s was drawn into a capture, it is work to join back. */
void sim_capture_note_work(struct sim_stream *s);
/* An event recorded on s: where, for a stream that waits for it later. */
struct sim_capture_mark sim_capture_mark_of(struct sim_stream *s);
/* s waits for an event with mark m: a fork into m's capture, or a join within it. */
CUresult sim_capture_wait(struct sim_stream *s, const struct sim_capture_mark *m);

/*
 * The stream behind a handle: NULL means the legacy stream, or the
 * per-thread one when the call came through a _ptsz/_ptds export.
 */
CUresult sim_stream_resolve(CUstream h, bool per_thread_default, struct sim_stream **out);
/*
 * Queue an operation of cost_ns on s in virtual time, after everything it
 * must wait for. Returns its completion time. The work itself has already
 * been done by the caller: execution is eager, only time is modelled.
 */
uint64_t sim_stream_enqueue(struct sim_stream *s, uint64_t cost_ns);
/* A call that returns only when its work is done: the host waits for it. */
uint64_t sim_stream_enqueue_sync(struct sim_stream *s, uint64_t cost_ns);
void sim_streams_release_ctx(struct sim_ctx *ctx);
/* The answer a query gives: CUDA_SUCCESS once now >= done_ns, else NOT_READY (time passes). */
CUresult sim_poll(uint64_t done_ns);

/* ---- context.c / primary.c ---- */

struct sim_ctx {
	int device;
	unsigned flags;
	bool primary;
	bool active;             /* primary contexts: retained since the last release to 0 */
	unsigned refcount;       /* primary contexts only (sim_ctx_lock) */
	struct sim_stream legacy;
	uint64_t horizon_ns;     /* all work queued in the context is done (sim_time_lock) */
	uint64_t blocking_ns;    /* work on blocking streams is done: the legacy stream waits for it */
};

/*
 * The calling thread's current context: CUDA_ERROR_INVALID_CONTEXT without
 * one, CUDA_ERROR_CONTEXT_IS_DESTROYED when it has gone since.
 */
CUresult sim_current_ctx(struct sim_ctx **out);
/* A context handle given by the caller: alive, or an error. */
CUresult sim_ctx_check(struct sim_ctx *ctx);
void sim_ctx_init(struct sim_ctx *ctx, int device, unsigned flags, bool primary);
/* cuCtxCreate / cuDevicePrimaryCtxSetFlags flags. */
bool sim_ctx_flags_valid(unsigned flags);
/* Frees everything the context owns: streams, events, modules, memory. */
void sim_ctx_release_resources(struct sim_ctx *ctx);

/* ---- clock.c: virtual time ---- */

uint64_t sim_clock_now(void);
/* Moves the clock forward to t (never backwards). */
void sim_clock_advance_to(uint64_t t);
void sim_clock_advance_by(uint64_t ns);
/* Nanoseconds to move `bytes` at `bytes_per_second`, rounded up. */
uint64_t sim_transfer_ns(uint64_t bytes, double bytes_per_second);

/* ---- alloc.c: the table of allocations ---- */

enum sim_mem_kind { SIM_MEM_DEVICE, SIM_MEM_HOST, SIM_MEM_MANAGED };

struct sim_block;

/* Recent work on one stream that used bytes [lo, hi) of an allocation, and when it ends in virtual time (hazard.c). */
struct sim_use {
	const struct sim_stream *stream; /* NULL: none yet */
	uintptr_t lo, hi;
	uint64_t end_ns;
	bool write;
};

enum { SIM_USES = 8 }; /* the uses an allocation keeps: those that end last */

struct sim_alloc {
	uintptr_t base;
	size_t size;              /* as asked for */
	enum sim_mem_kind kind;
	int device;               /* the allocating context's device */
	struct sim_ctx *ctx;
	unsigned flags;           /* cuMemHostAlloc or cuMemAllocManaged flags */
	uint64_t id;              /* CU_POINTER_ATTRIBUTE_BUFFER_ID: never reused */
	uint64_t charged;         /* device bytes charged for plain device memory */
	size_t mapped;            /* bytes mmap'd at base, or 0 when from malloc */
	struct sim_block *blocks; /* managed memory: one per 2 MiB */
	size_t nblocks;
	bool graph;               /* allocated into a stream being captured: the graph's own (memory.c) */
	struct sim_pool *pool;    /* a stream-ordered allocation's pool, which counts it while it lives (vmm.c) */
	struct sim_use uses[SIM_USES]; /* under EMBER_SIM_HAZARDS (hazard.c) */
};

struct sim_pool;

/* The pool of dev that a stream-ordered allocation naming none comes from: its current pool. */
struct sim_pool *sim_pool_current(int dev);

/* A pool's allocations grow or shrink by bytes (sim_mem_lock held); a destroyed pool goes with its last. */
void sim_pool_charge(struct sim_pool *pool, int64_t bytes);

/* A stream-ordered allocation from pool (NULL: the current device's current pool), on hStream. */
CUresult sim_alloc_async(CUdeviceptr *dptr, size_t bytesize, struct sim_pool *pool, CUstream hStream, bool per_thread);

/* Allocation bookkeeping; all under sim_mem_lock. */
struct sim_memory {
	uint64_t plain[SIM_MAX_DEVICES];    /* cuMemAlloc bytes charged per device */
	uint64_t resident[SIM_MAX_DEVICES]; /* managed bytes resident per device */
	uint64_t peak_resident[SIM_MAX_DEVICES]; /* the most resident[] ever held */
	uint64_t migrated[2];               /* EMBER_SIM_TO_DEVICE / EMBER_SIM_TO_HOST */
	uint64_t uses;                      /* a counter ordering block uses, for eviction */
};
extern struct sim_memory sim_mem;

/* A new allocation with zeroed memory, not yet in the table; NULL when out of memory. */
struct sim_alloc *sim_alloc_new(enum sim_mem_kind kind, size_t size, struct sim_ctx *ctx,
				unsigned flags);
/* Whether the legacy IPC (cuIpcGetMemHandle) can share a: plain device memory of no pool and no graph (ipc.c). */
bool sim_ipc_capable(const struct sim_alloc *a);
/* Into the table, with a fresh id (sim_mem_lock held); false when out of memory. */
bool sim_alloc_insert(struct sim_alloc *a);
/* Out of the table, and out of the device's accounting (sim_mem_lock held). */
void sim_alloc_retire(struct sim_alloc *a);
/* The allocation holding addr, or NULL (sim_mem_lock held). */
struct sim_alloc *sim_alloc_find(uintptr_t addr);
/* The allocation holding all of [addr, addr + len), or NULL (sim_mem_lock held). */
struct sim_alloc *sim_alloc_find_range(uintptr_t addr, size_t len);
/* Calls fn on every allocation (sim_mem_lock held). */
void sim_alloc_for_each(void (*fn)(struct sim_alloc *, void *), void *arg);
/* Frees an allocation that is no longer in the table. */
void sim_alloc_destroy(struct sim_alloc *a);
void sim_memory_release_ctx(struct sim_ctx *ctx);
/* Device bytes in use (plain + managed-resident) and still free. */
uint64_t sim_device_used(int dev);
uint64_t sim_device_free(int dev);

/* ---- vmm.c, vmm_map.c: the virtual memory API's physical allocations and their mappings ---- */
struct sim_physical {
	uint64_t size;
	int device;               /* EMBER_SIM_HOST: in host memory */
	unsigned refs;            /* the program's references and its mappings, changed atomically */
	CUmemAllocationProp prop; /* as created */
};
/* The live allocation handle names; NULL where it names none, which the driver refuses too. */
struct sim_physical *sim_physical_of(CUmemGenericAllocationHandle handle);
/* One reference to p dropped: at the last, its bytes go back and it is freed. */
void sim_physical_put(struct sim_physical *p);
/* The mapping addr lies in (vmm_map.c), its start and size; false where none holds it. */
bool sim_vmm_mapping_of(uintptr_t addr, uintptr_t *va, size_t *size);

/* ---- managed.c: the per-block model of managed memory ---- */

/* Where a block lives, or where advice points: the values of ember_sim.h. */
#define SIM_LOC_NONE EMBER_SIM_NOWHERE
#define SIM_LOC_HOST EMBER_SIM_HOST
#define SIM_HOST_BIT (1u << 31) /* accessed-by / mapped masks: the CPU */

#define SIM_BLOCK_SHIFT 21
#define SIM_BLOCK_BYTES ((size_t)1 << SIM_BLOCK_SHIFT)

struct sim_block {
	int8_t where;           /* residency: SIM_LOC_NONE until populated */
	int8_t preferred;       /* SIM_LOC_NONE when unset */
	int8_t last_prefetch;   /* SIM_LOC_NONE when never prefetched */
	bool read_mostly;
	bool host_copy;         /* read-mostly: a duplicate also lives in host memory */
	uint32_t accessed_by;   /* device bits and SIM_HOST_BIT */
	uint32_t mapped;        /* GPUs with a mapping to the block where it is */
	uint64_t gpu_accesses;  /* ember_sim_access reports from kernels */
	uint64_t gpu_bytes;
	uint64_t cpu_accesses;
	uint64_t last_use;      /* sim_mem.uses at its last kernel touch or prefetch: LRU order */
};

CUresult sim_managed_setup(struct sim_alloc *a);
/* Returns the allocation's device-resident blocks to the accounting. */
void sim_managed_teardown(struct sim_alloc *a);
size_t sim_block_len(const struct sim_alloc *a, size_t i);
/* Blocks [*first, *end) overlapping [addr, addr + len) of a. */
void sim_block_span(const struct sim_alloc *a, uintptr_t addr, size_t len, size_t *first,
		    size_t *end);
/*
 * The managed allocation holding all of [addr, addr + len), and its blocks
 * [*first, *end) in that range; NULL when the range is not one managed
 * allocation's (sim_mem_lock held).
 */
struct sim_alloc *sim_managed_range(uintptr_t addr, size_t len, size_t *first, size_t *end);
/* Migrate (or first populate) block i at `to`, a device or the host, keeping the books. */
void sim_block_move(struct sim_alloc *a, size_t i, int to);
/* Read-mostly: a copy of the host-resident block i on dev as well. */
void sim_block_duplicate(struct sim_alloc *a, size_t i, int dev);
/* Read-mostly: forget the device copy; the host copy remains. */
void sim_block_drop_device_copy(struct sim_alloc *a, size_t i);
/* A never-populated block the CPU has touched since (page tables say so) becomes host-resident. */
void sim_block_notice_cpu(struct sim_alloc *a, size_t i);
/*
 * Make `need` bytes free on dev by evicting least recently used managed
 * blocks to the host, never ones of `keep` in [keep_first, keep_end).
 * Returns the virtual time the evictions cost, and sets *ok.
 */
uint64_t sim_make_room(int dev, uint64_t need, const struct sim_alloc *keep, size_t keep_first,
		       size_t keep_end, bool *ok);
/*
 * A copy or memset touching [p, p + n) of a (NULL: not driver memory):
 * whether those bytes are on a device. Never-populated managed blocks it
 * touches become host-populated. sim_mem_lock held.
 */
bool sim_copy_on_device(struct sim_alloc *a, uintptr_t p, size_t n);
/*
 * A copy or memset writing [p, p + n) of a: the bytes of it under
 * read-mostly advice, which the driver writes page by page (each block's
 * duplicate collapses to the copy written where it lands).
 */
size_t sim_copy_into_read_mostly(struct sim_alloc *a, uintptr_t p, size_t n);
/* The device a copy's side at [p, p + n) of a is on, after sim_copy_on_device found it there; -1: host. */
int sim_copy_device(const struct sim_alloc *a, uintptr_t p, size_t n);

/* peers.c: EMBER_SIM_PEERS, read at set-up; whether GPUs (ordinals) dev and peer have a peer link. */
void sim_peers_setup(void);
bool sim_peer_link(int dev, int peer);
/* Kernel (dev >= 0) or CPU (dev < 0) access to managed memory; returns its cost. */
uint64_t sim_managed_access(struct sim_alloc *a, uintptr_t addr, size_t len, bool write, int dev);

/* ---- registry.c: host functions that stand in for kernels ---- */

#define SIM_MAX_PARAMS 128
#define SIM_MAX_PARAM_BYTES 32764 /* the driver's limit on a kernel's parameters */

struct sim_kernel {
	char *name;
	ember_sim_kernel_fn fn;
	unsigned nparams;
	size_t sizes[SIM_MAX_PARAMS];
	size_t offsets[SIM_MAX_PARAMS];
	size_t args_bytes;      /* the packed parameter buffer */
};

/* A registered kernel by name, or NULL; kernels are never freed. */
const struct sim_kernel *sim_kernel_find(const char *name);
unsigned sim_kernel_count(void);
void sim_register_builtin_kernels(void);

/* ---- module.c / library.c / function.c ---- */

struct sim_func;

struct sim_module {
	struct sim_ctx *ctx;    /* NULL for a library's module: it belongs to no context */
	bool every_kernel;      /* loaded from "ember-sim:" */
	char **entries;         /* .entry names of the PTX */
	size_t nentries;
	struct sim_func **funcs; /* handed out so far, freed with the module */
	size_t nfuncs;          /* funcs and nfuncs: under sim_code_lock */
};

struct sim_func {
	struct sim_module *mod;
	const struct sim_kernel *kernel;
};

CUresult sim_module_load(struct sim_module **out, const void *image, struct sim_ctx *ctx);
CUresult sim_module_load_file(struct sim_module **out, const char *path, struct sim_ctx *ctx);
CUresult sim_module_get_function(struct sim_func **out, struct sim_module *mod, const char *name);
unsigned sim_module_function_count(const struct sim_module *mod);
void sim_module_destroy(void *mod);
void sim_modules_release_ctx(struct sim_ctx *ctx);
/* graph.c: the graph executables instantiated in ctx, destroyed with it. */
void sim_graphs_release_ctx(struct sim_ctx *ctx);
/* A function handle (CUfunction, or a library's CUkernel, which is the same thing). */
CUresult sim_func_check(void *h, struct sim_func **out);

/* ---- event.c ---- */

void sim_events_release_ctx(struct sim_ctx *ctx);

/* ---- launch.c: the running kernel, for ember_sim_access ---- */

/* The launch the calling thread is running a kernel for, or NULL. */
const struct ember_sim_launch *sim_current_launch(void);
/* The running kernel used [p, p + bytes) (access.c), for the hazards once its time is known. */
void sim_launch_note_use(uintptr_t p, size_t bytes, bool write);
/* Adds virtual time to the running kernel. */
void sim_launch_charge(uint64_t ns);
/* A new empty graph, and a kernel node appended to one, as cuGraphCreate and cuGraphAddKernelNode do (graph.c). */
CUresult sim_graph_create(CUgraph *out);
CUresult sim_graph_add_kernel(CUgraph graph, const CUDA_KERNEL_NODE_PARAMS *p);
/* The same for a memset into a capturing stream. */
CUresult sim_graph_add_memset(CUgraph graph, const CUDA_MEMSET_NODE_PARAMS *p);
/* The same for a copy into a capturing stream: one row, CUDA_MEMCPY3D's form. */
CUresult sim_graph_add_memcpy(CUgraph graph, const CUDA_MEMCPY3D *p);
/* A graph's kernel node, launched on stream (graph.c). */
CUresult sim_launch_node(const CUDA_KERNEL_NODE_PARAMS *p, CUstream stream, bool per_thread);
/* A graph's memset node, row by row on the stream (memset.c). */
CUresult sim_memset_node(const CUDA_MEMSET_NODE_PARAMS *m, CUstream stream, bool per_thread);
/* A graph's memcpy node of one row, queued on the stream (copy.c). */
CUresult sim_copy_node(const CUDA_MEMCPY3D *c, CUstream stream, bool per_thread);

#endif
