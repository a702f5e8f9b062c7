// ember-vmm-host-probe BYTES: how fast a kernel reads host memory made for
// the GPU in each way Ember can make it. Past the budget under
// EMBER_MANAGE_ALL, Ember makes a program's cuMemCreate memory in host
// memory (shim/mech/physical.h), which the program maps for the GPU itself;
// its converted memory is managed memory preferring the host. Each case is
// BYTES, written once by a kernel, then read by one launch in pieces at
// hashed places (pieces.cuh), one warp a piece, at 64 KiB and at 128 bytes:
//   managed        cudaMallocManaged, preferring the host and accessed by the
//                  GPU (Ember's mapped tier), its pages made by the host first
//   pinned         cudaHostAlloc, mapped (page-locked host memory)
//   vmm-host       cuMemCreate with a HOST location, mapped with cuMemMap
//   vmm-host-numa  the same on the GPU's host NUMA node
//   vmm-device     cuMemCreate on the GPU (the device's own rate)
// with the minimum and recommended granularity the driver gives each VMM
// case. Prints one JSON record; a case the driver refuses prints its error.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "cuda_check.h"
#include "pieces.cuh"

static unsigned *out;
static int nb;

struct rates {
	double dense, sparse;
};

static rates read_rates(unsigned *p, size_t bytes)
{
	CHECK(cudaMemset(p, 1, bytes)); // written once by the GPU
	CHECK(cudaDeviceSynchronize());
	pieces_rate(p, bytes, 65536, bytes / 65536, 0, nb, out); // a warm-up: mappings made
	return { pieces_rate(p, bytes, 65536, bytes / 65536, 0, nb, out),
		 pieces_rate(p, bytes, 128, bytes / 65536 * 16, 0, nb, out) };
}

static std::string record(const char *name, const rates &r, const std::string &extra = "")
{
	char buf[256];
	snprintf(buf, sizeof buf, "\"%s\": {\"read_64k_Bps\": %.4g, \"read_128_Bps\": %.4g%s}", name, r.dense, r.sparse,
		 extra.c_str());
	return buf;
}

static std::string refused(const char *name, const char *what, CUresult r)
{
	const char *s = nullptr;
	cuGetErrorName(r, &s);
	return std::string("\"") + name + "\": {\"refused\": \"" + what + ": " + (s ? s : "?") + "\"}";
}

// cuMemCreate at loc, reserved, mapped and made accessible to the GPU; the case's record.
static std::string vmm(const char *name, CUmemLocation loc, size_t bytes, int dev)
{
	CUmemAllocationProp prop = {};
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location = loc;
	size_t minimum = 0, recommended = 0;
	CUresult r = cuMemGetAllocationGranularity(&minimum, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	if (r == CUDA_SUCCESS)
		r = cuMemGetAllocationGranularity(&recommended, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
	if (r != CUDA_SUCCESS)
		return refused(name, "cuMemGetAllocationGranularity", r);
	size_t size = (bytes + recommended - 1) / recommended * recommended;
	CUmemGenericAllocationHandle h;
	if ((r = cuMemCreate(&h, size, &prop, 0)) != CUDA_SUCCESS)
		return refused(name, "cuMemCreate", r);
	CUdeviceptr va;
	if ((r = cuMemAddressReserve(&va, size, recommended, 0, 0)) != CUDA_SUCCESS)
		return refused(name, "cuMemAddressReserve", r);
	if ((r = cuMemMap(va, size, 0, h, 0)) != CUDA_SUCCESS)
		return refused(name, "cuMemMap", r);
	CUmemAccessDesc access = {};
	access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	access.location.id = dev;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	if ((r = cuMemSetAccess(va, size, &access, 1)) != CUDA_SUCCESS)
		return refused(name, "cuMemSetAccess", r);
	rates got = read_rates((unsigned *)va, size);
	cuMemUnmap(va, size); // the process ends soon: what these return changes nothing measured
	cuMemAddressFree(va, size);
	cuMemRelease(h);
	char extra[96];
	snprintf(extra, sizeof extra, ", \"granularity_minimum\": %zu, \"granularity_recommended\": %zu", minimum,
		 recommended);
	return record(name, got, extra);
}

int main(int argc, char **argv)
{
	size_t bytes = argc > 1 ? strtoull(argv[1], nullptr, 0) : (size_t)1 << 30;
	if (argc != 2 || bytes < (64u << 20)) {
		fprintf(stderr, "usage: ember-vmm-host-probe BYTES (at least 64 MiB)\n");
		return 2;
	}
	int dev = 0;
	CHECK(cudaSetDevice(dev));
	CHECK(cudaFree(0)); // the primary context, current for the driver calls below
	CHECK(cudaDeviceGetAttribute(&nb, cudaDevAttrMultiProcessorCount, dev));
	nb *= 8;
	CHECK(cudaMalloc(&out, sizeof *out));
	std::string cases;

	unsigned *m;
	CHECK(cudaMallocManaged(&m, bytes));
	cudaMemLocation host = { cudaMemLocationTypeHost, 0 }, gpu = { cudaMemLocationTypeDevice, dev };
	CHECK(cudaMemAdvise(m, bytes, cudaMemAdviseSetPreferredLocation, host));
	CHECK(cudaMemAdvise(m, bytes, cudaMemAdviseSetAccessedBy, gpu));
	memset(m, 0, bytes); // the host makes its pages, as Ember's touches do
	cases += record("managed", read_rates(m, bytes));
	CHECK(cudaFree(m));

	unsigned *pinned;
	CHECK(cudaHostAlloc(&pinned, bytes, cudaHostAllocMapped));
	cases += ", " + record("pinned", read_rates(pinned, bytes));
	CHECK(cudaFreeHost(pinned));

	CUmemLocation loc = { CU_MEM_LOCATION_TYPE_HOST, 0 };
	cases += ", " + vmm("vmm-host", loc, bytes, dev);
	int numa = -1;
	if (cuDeviceGetAttribute(&numa, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, dev) == CUDA_SUCCESS && numa >= 0) {
		loc = { CU_MEM_LOCATION_TYPE_HOST_NUMA, numa };
		cases += ", " + vmm("vmm-host-numa", loc, bytes, dev);
	}
	loc = { CU_MEM_LOCATION_TYPE_DEVICE, dev };
	cases += ", " + vmm("vmm-device", loc, bytes, dev);
	cudaDeviceProp p;
	CHECK(cudaGetDeviceProperties(&p, dev));
	printf("{\"probe\": \"vmm-host\", \"gpu\": \"%s\", \"bytes\": %zu, \"host_numa_id\": %d, %s}\n", p.name, bytes,
	       numa, cases.c_str());
	return 0;
}
