/*
 * Copies and memsets (copies.def): a write into memory that launches have
 * only read withdraws its read-mostly advice before the driver sees it
 * (read_dup.h: under the advice a copy into 4 GiB took 21.4 s on the H200,
 * against 0.084 s). Until a launch has read an allocation under
 * EMBER_READ_MOSTLY, each costs one load before it forwards.
 */
#include <cuda.h>
#include <stdint.h>

#include "copies.h"
#include "read_dup.h"
#include "shim.h"

#define HOST(p) ((CUdeviceptr)(uintptr_t)(p))

static void copy_into(CUdeviceptr dst, size_t bytes)
{
	ember_read_dup_copy_into(dst, bytes);
}

/* n elements of `size` bytes. */
static void copy_into_n(CUdeviceptr dst, size_t n, size_t size)
{
	ember_read_dup_copy_into(dst, n > SIZE_MAX / size ? SIZE_MAX : n * size);
}

/* `rows` rows of `width` bytes, `pitch` apart: from the first row's start to the last row's end. */
static void copy_into_rows(CUdeviceptr dst, size_t pitch, size_t width, size_t rows)
{
	if (rows == 0 || width == 0)
		return;
	size_t before_last = rows - 1;
	bool huge = pitch && before_last > (SIZE_MAX - width) / pitch;
	ember_read_dup_copy_into(dst, huge ? SIZE_MAX : before_last * pitch + width);
}

/* Where a 2D or 3D copy's destination starts, from its memory type: 0 for an array, which is no managed memory. */
static CUdeviceptr destination(CUmemorytype type, const void *host, CUdeviceptr device)
{
	switch (type) {
	case CU_MEMORYTYPE_HOST:
		return HOST(host);
	case CU_MEMORYTYPE_DEVICE:
	case CU_MEMORYTYPE_UNIFIED: /* the unified address is dstDevice */
		return device;
	default:
		return 0;
	}
}

static void copy_into_2d(const CUDA_MEMCPY2D *c)
{
	CUdeviceptr dst = c ? destination(c->dstMemoryType, c->dstHost, c->dstDevice) : 0;
	if (dst)
		copy_into_rows(dst + c->dstY * c->dstPitch + c->dstXInBytes, c->dstPitch, c->WidthInBytes, c->Height);
}

/* A 3D copy's rows: Height in each of Depth layers of dstHeight rows. */
#define COPY_INTO_3D(c)                                                                                       \
	do {                                                                                                  \
		CUdeviceptr dst_ = (c) ? destination((c)->dstMemoryType, (c)->dstHost, (c)->dstDevice) : 0;  \
		if (dst_ && (c)->Depth)                                                                       \
			copy_into_rows(dst_ + ((c)->dstZ * (c)->dstHeight + (c)->dstY) * (c)->dstPitch +      \
					       (c)->dstXInBytes,                                              \
				       (c)->dstPitch, (c)->WidthInBytes,                                      \
				       ((c)->Depth - 1) * (c)->dstHeight + (c)->Height);                      \
	} while (0)

void ember_copy_into_3d(const CUDA_MEMCPY3D *c)
{
	COPY_INTO_3D(c);
}

void ember_memset_node_into(const CUDA_MEMSET_NODE_PARAMS *m)
{
	if (m && m->elementSize && m->width <= SIZE_MAX / m->elementSize)
		copy_into_rows(m->dst, m->pitch, m->width * m->elementSize, m->height);
}

static void copy_into_3d_peer(const CUDA_MEMCPY3D_PEER *c)
{
	COPY_INTO_3D(c);
}

static void copy_into_batch(const CUdeviceptr *dsts, const size_t *sizes, size_t count)
{
	for (size_t i = 0; dsts && sizes && i < count; i++)
		copy_into(dsts[i], sizes[i]);
}

/* A pointer operand's extent is in elements of a size the operation does not give: its start names the allocation. */
static void copy_into_3d_batch(const CUDA_MEMCPY3D_BATCH_OP *ops, size_t n)
{
	for (size_t i = 0; ops && i < n; i++)
		if (ops[i].dst.type == CU_MEMCPY_OPERAND_TYPE_POINTER)
			copy_into(ops[i].dst.op.ptr.ptr, 1);
}

#define EMBER_COPY(name, params, args, into)                                   \
	EMBER_PUBLIC CUresult CUDAAPI name params                              \
	{                                                                      \
		if (__atomic_load_n(&ember_read_dup_watching, __ATOMIC_RELAXED)) \
			into;                                                  \
		return EMBER_REAL(name) args;                                  \
	}
#include "copies.def"
#undef EMBER_COPY
