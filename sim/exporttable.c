/*
 * cuGetExportTable: the driver's private interfaces, by UUID. The sim has
 * one, made up for tests (ember_sim.h), so that they can check that a
 * table pointer passes through the shim untouched.
 */
#include <stdio.h>
#include <string.h>

#include "sim.h"

static int test_magic(void)
{
	return EMBER_SIM_TEST_EXPORT_MAGIC;
}

static const struct ember_sim_test_export_table test_table = {
	.size = sizeof test_table,
	.magic = test_magic,
};

_Static_assert(sizeof EMBER_SIM_TEST_EXPORT_UUID - 1 == sizeof(CUuuid), "the test UUID is 16 bytes");

SIM_EXPORT CUresult CUDAAPI cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
	if (!ppExportTable || !pExportTableId)
		return CUDA_ERROR_INVALID_VALUE;
	if (memcmp(pExportTableId->bytes, EMBER_SIM_TEST_EXPORT_UUID, sizeof pExportTableId->bytes) != 0) {
		/* the CUDA runtime's first step: without a word here, its programs die of cudaErrorNotSupported */
		static int told;
		if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
			fprintf(stderr, "ember-sim driver: the program asked for one of the real driver's private "
					"interfaces (cuGetExportTable), as the CUDA runtime (cudart), and so PyTorch, "
					"CuPy, JAX and nvcc-built programs, does first; the simulated driver serves "
					"driver-API programs only, so it will fail. Run it on a GPU.\n");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	*ppExportTable = &test_table;
	return CUDA_SUCCESS;
}
