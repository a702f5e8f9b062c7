/* The simulated GPUs: H200-like devices, EMBER_SIM_DEVICES of them. */
#include <stdio.h>
#include <string.h>

#include "sim.h"

#define SIM_DEVICE_NAME "Ember Simulated GPU"
#define SIM_PCI_BUS_BASE 0x18 /* device d sits on bus 0x18 + d */

/* What an H200 reports (compute capability 9.0, 132 SMs); per-device values are patched in. */
static const struct {
	CUdevice_attribute attr;
	int value;
} h200[] = {
	{ CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024 },
	{ CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1024 },
	{ CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 1024 },
	{ CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 64 },
	{ CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 2147483647 },
	{ CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 65535 },
	{ CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 65535 },
	{ CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 49152 },
	{ CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, 65536 },
	{ CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32 },
	{ CU_DEVICE_ATTRIBUTE_MAX_PITCH, 2147483647 },
	{ CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 65536 },
	{ CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 1980000 },
	{ CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, 512 },
	{ CU_DEVICE_ATTRIBUTE_GPU_OVERLAP, 1 },
	{ CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 132 },
	{ CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT, 0 },
	{ CU_DEVICE_ATTRIBUTE_INTEGRATED, 0 },
	{ CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 1 },
	{ CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, CU_COMPUTEMODE_DEFAULT },
	{ CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH, 131072 },
	{ CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH, 131072 },
	{ CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT, 65536 },
	{ CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH, 16384 },
	{ CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT, 16384 },
	{ CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH, 16384 },
	{ CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT, 512 },
	{ CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, 1 },
	{ CU_DEVICE_ATTRIBUTE_ECC_ENABLED, 1 },
	{ CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, SIM_PCI_BUS_BASE },
	{ CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, 0 },
	{ CU_DEVICE_ATTRIBUTE_TCC_DRIVER, 0 },
	{ CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 2619000 },
	{ CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 6144 },
	{ CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 52428800 },
	{ CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 2048 },
	{ CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, 3 },
	{ CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1 },
	{ CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, 0 },
	{ CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, 32 },
	{ CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9 },
	{ CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0 },
	{ CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 233472 },
	{ CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, 65536 },
	{ CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 1 },
	{ CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD, 0 },
	{ CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID, 0 },
	{ CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED, 0 },
	{ CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO, 2 },
	{ CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, 0 },
	{ CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 1 },
	{ CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, 0 },
	{ CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, 1 },
	{ CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 232448 },
	{ CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, 0 },
	{ CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, 0 },
	{ CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST, 0 },
	{ CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED, 0 },
	{ CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED, 0 },
	{ CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, 32 },
	{ CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, 82837504 },
	{ CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, 134213632 },
	{ CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, 1024 },
	{ CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS, 1 },
	{ CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING, 100 },
	{ CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR },
	{ CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, 1 },
	{ CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, 1 },
	{ CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, 1 },
	{ CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT, 4 },
	{ CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0 },
	{ CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS, 0 },
	{ CU_DEVICE_ATTRIBUTE_NUMA_CONFIG, 0 },
	{ CU_DEVICE_ATTRIBUTE_NUMA_ID, -1 },
	{ CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0 },
	{ CU_DEVICE_ATTRIBUTE_MPS_ENABLED, 0 },
	{ CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0 },
	{ CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID, 0x233510de },
	{ CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID, 0x18d810de },
	{ CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED, 0 },
	{ CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0 },
};

bool sim_device_valid(CUdevice dev)
{
	return dev >= 0 && (unsigned)dev < sim_globals.devices;
}

#define REQUIRE_DEVICE(dev)                                                                \
	do {                                                                               \
		SIM_REQUIRE_INIT();                                                        \
		if (!sim_device_valid(dev))                                                \
			return CUDA_ERROR_INVALID_DEVICE;                                  \
	} while (0)

SIM_EXPORT CUresult CUDAAPI cuDeviceGetCount(int *count)
{
	SIM_REQUIRE_INIT();
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = (int)sim_globals.devices;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
	SIM_REQUIRE_INIT();
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_valid(ordinal))
		return CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
	REQUIRE_DEVICE(dev);
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "%s", SIM_DEVICE_NAME);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	REQUIRE_DEVICE(dev);
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	*bytes = sim_globals.device_memory;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	REQUIRE_DEVICE(dev);
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof h200 / sizeof h200[0]; i++) {
		if (h200[i].attr != attrib)
			continue;
		int v = h200[i].value;
		if (attrib == CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)
			v += sim_globals.physical[dev];
		else if (attrib == CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID)
			v = sim_globals.physical[dev];
		*pi = v;
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_INVALID_VALUE;
}

/*
 * Stable and distinct per simulated GPU: "EmberSimGPU" then its physical
 * index, whatever ordinal CUDA_VISIBLE_DEVICES gives it (visible.c).
 */
void sim_physical_uuid(CUuuid *uuid, int physical)
{
	static const char prefix[] = "EmberSimGPU";
	memset(uuid->bytes, 0, sizeof uuid->bytes);
	memcpy(uuid->bytes, prefix, sizeof prefix - 1);
	uuid->bytes[15] = (char)physical;
}

static void device_uuid(CUuuid *uuid, CUdevice dev)
{
	sim_physical_uuid(uuid, sim_globals.physical[dev]);
}

SIM_EXPORT CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	REQUIRE_DEVICE(dev);
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	device_uuid(uuid, dev);
	return CUDA_SUCCESS;
}

/* The older entry point differs only for MIG instances, which the sim has none of. */
SIM_EXPORT CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	return cuDeviceGetUuid_v2(uuid, dev);
}

static void pci_bus_id(char *out, size_t len, CUdevice dev)
{
	snprintf(out, len, "00000000:%02X:00.0", SIM_PCI_BUS_BASE + sim_globals.physical[dev]);
}

SIM_EXPORT CUresult CUDAAPI cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	REQUIRE_DEVICE(dev);
	if (!pciBusId || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	pci_bus_id(pciBusId, (size_t)len, dev);
	return CUDA_SUCCESS;
}

/* "domain:bus:device.function" or "bus:device.function", hexadecimal, as the driver accepts. */
static bool parse_bus_id(const char *s, unsigned *domain, unsigned *bus, unsigned *device)
{
	unsigned function = 0;
	if (sscanf(s, "%x:%x:%x.%x", domain, bus, device, &function) >= 3)
		return true;
	*domain = 0;
	return sscanf(s, "%x:%x.%x", bus, device, &function) >= 2;
}

SIM_EXPORT CUresult CUDAAPI cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
	SIM_REQUIRE_INIT();
	unsigned domain, bus, device;
	if (!dev || !pciBusId || !parse_bus_id(pciBusId, &domain, &bus, &device))
		return CUDA_ERROR_INVALID_VALUE;
	if (domain != 0 || device != 0 || bus < SIM_PCI_BUS_BASE)
		return CUDA_ERROR_INVALID_DEVICE;
	/* the ordinal of that simulated GPU, if CUDA_VISIBLE_DEVICES shows it */
	for (unsigned d = 0; d < sim_globals.devices; d++)
		if ((unsigned)sim_globals.physical[d] == bus - SIM_PCI_BUS_BASE) {
			*dev = (CUdevice)d;
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_INVALID_DEVICE;
}

SIM_EXPORT CUresult CUDAAPI cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
	SIM_REQUIRE_INIT();
	if (!canAccessPeer)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_valid(dev) || !sim_device_valid(peerDev))
		return CUDA_ERROR_INVALID_DEVICE;
	*canAccessPeer = sim_peer_link(dev, peerDev); /* EMBER_SIM_PEERS (peers.c) */
	return CUDA_SUCCESS;
}
