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
//   vmm-split      half on the GPU and half in host memory, two handles mapped
//                  side by side in one reservation: whether one cuMemSetAccess
//                  and one cuMemUnmap may span both mappings, and what
//                  cuMemRetainAllocationHandle gives in each half, and in
//                  the GPU half once released while mapped (what Ember
//                  would need to split a pool's region at the budget)
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
	char buf[2048];
	snprintf(buf, sizeof buf, "\"%s\": {\"read_64k_Bps\": %.4g, \"read_128_Bps\": %.4g%s}", name, r.dense, r.sparse,
		 extra.c_str());
	return buf;
}

static const char *error_name(CUresult r)
{
	const char *s = nullptr;
	cuGetErrorName(r, &s);
	return s ? s : "?";
}

static std::string refused(const char *name, const char *what, CUresult r)
{
	return std::string("\"") + name + "\": {\"refused\": \"" + what + ": " + error_name(r) + "\"}";
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

// What the driver gives as the range around p, as JSON fields named for which: by cuMemGetAddressRange
// and by the pointer attributes, each as its start's offset from va and its size.
static std::string range_at(const char *which, CUdeviceptr va, CUdeviceptr p)
{
	CUdeviceptr base = 0, start = 0;
	size_t size = 0, attr_size = 0;
	CUresult r = cuMemGetAddressRange(&base, &size, p);
	CUresult ra = cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p);
	if (ra == CUDA_SUCCESS)
		ra = cuPointerGetAttribute(&attr_size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p);
	char out[320];
	snprintf(out, sizeof out,
		 ", \"range_%s\": \"%s\", \"range_%s_offset\": %lld, \"range_%s_size\": %zu, "
		 "\"range_attr_%s\": \"%s\", \"range_attr_%s_offset\": %lld, \"range_attr_%s_size\": %zu",
		 which, error_name(r), which, (long long)(base - va), which, size, which, error_name(ra), which,
		 (long long)(start - va), which, attr_size);
	return out;
}

// Two handles, on the GPU and in host memory, mapped side by side: spans answered, then rates.
static std::string vmm_split(size_t bytes, int dev)
{
	CUmemAllocationProp gpu = {}, host = {};
	gpu.type = host.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	gpu.location = { CU_MEM_LOCATION_TYPE_DEVICE, dev };
	host.location = { CU_MEM_LOCATION_TYPE_HOST, 0 };
	size_t g = 0, gh = 0;
	CUresult r = cuMemGetAllocationGranularity(&g, &gpu, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
	if (r == CUDA_SUCCESS)
		r = cuMemGetAllocationGranularity(&gh, &host, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
	if (r != CUDA_SUCCESS)
		return refused("vmm-split", "cuMemGetAllocationGranularity", r);
	if (gh > g)
		g = gh;
	size_t half = (bytes / 2 + g - 1) / g * g, size = 2 * half;
	CUmemGenericAllocationHandle hg, hh;
	if ((r = cuMemCreate(&hg, half, &gpu, 0)) != CUDA_SUCCESS)
		return refused("vmm-split", "cuMemCreate on the GPU", r);
	if ((r = cuMemCreate(&hh, half, &host, 0)) != CUDA_SUCCESS)
		return refused("vmm-split", "cuMemCreate in host memory", r);
	CUdeviceptr va;
	if ((r = cuMemAddressReserve(&va, size, g, 0, 0)) != CUDA_SUCCESS)
		return refused("vmm-split", "cuMemAddressReserve", r);
	if ((r = cuMemMap(va, half, 0, hg, 0)) != CUDA_SUCCESS || (r = cuMemMap(va + half, half, 0, hh, 0)) != CUDA_SUCCESS)
		return refused("vmm-split", "cuMemMap", r);
	CUmemAccessDesc access = {};
	access.location = { CU_MEM_LOCATION_TYPE_DEVICE, dev };
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CUresult set_span = cuMemSetAccess(va, size, &access, 1);
	if (set_span != CUDA_SUCCESS && ((r = cuMemSetAccess(va, half, &access, 1)) != CUDA_SUCCESS ||
					 (r = cuMemSetAccess(va + half, half, &access, 1)) != CUDA_SUCCESS))
		return refused("vmm-split", "cuMemSetAccess a mapping at a time", r);
	CUmemGenericAllocationHandle back_g = 0, back_h = 0;
	CUresult retain_g = cuMemRetainAllocationHandle(&back_g, (void *)(va + 4096));
	CUresult retain_h = cuMemRetainAllocationHandle(&back_h, (void *)(va + half + 4096));
	// one range of both mappings (the reservation's), or a range each (a mapping's)
	std::string ranges = range_at("gpu_half", va, va + 4096) + range_at("host_half", va, va + half + 4096);
	rates got = read_rates((unsigned *)va, size);
	CHECK(cudaDeviceSynchronize());
	// the GPU half released while mapped, its mapping holding it: what a retain gives then (Ember's split
	// answers such a retain with its own handle, held again, and expects the driver's handle unchanged)
	if (retain_g == CUDA_SUCCESS)
		cuMemRelease(back_g);
	cuMemRelease(hg);
	CUmemGenericAllocationHandle after = 0;
	CUresult retain_after = cuMemRetainAllocationHandle(&after, (void *)(va + 4096));
	bool after_same = retain_after == CUDA_SUCCESS && after == hg;
	if (retain_after == CUDA_SUCCESS)
		cuMemRelease(after);
	CUresult unmap_span = cuMemUnmap(va, size);
	CUresult unmap_each = CUDA_SUCCESS;
	if (unmap_span != CUDA_SUCCESS && (unmap_each = cuMemUnmap(va, half)) == CUDA_SUCCESS)
		unmap_each = cuMemUnmap(va + half, half);
	if (retain_h == CUDA_SUCCESS)
		cuMemRelease(back_h);
	cuMemAddressFree(va, size);
	cuMemRelease(hh);
	char extra[640];
	snprintf(extra, sizeof extra,
		 ", \"bytes\": %zu, \"set_access_span\": \"%s\", \"unmap_span\": \"%s\", \"unmap_each\": \"%s\", "
		 "\"retain_gpu_half\": \"%s\", \"retain_gpu_half_same\": %s, \"retain_host_half\": \"%s\", "
		 "\"retain_host_half_same\": %s, \"retain_after_release\": \"%s\", \"retain_after_release_same\": %s",
		 size, error_name(set_span), error_name(unmap_span), error_name(unmap_each), error_name(retain_g),
		 back_g == hg ? "true" : "false", error_name(retain_h), back_h == hh ? "true" : "false",
		 error_name(retain_after), after_same ? "true" : "false");
	return record("vmm-split", got, extra + ranges);
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
	cases += ", " + vmm_split(bytes, dev);
	cudaDeviceProp p;
	CHECK(cudaGetDeviceProperties(&p, dev));
	printf("{\"probe\": \"vmm-host\", \"gpu\": \"%s\", \"bytes\": %zu, \"host_numa_id\": %d, %s}\n", p.name, bytes,
	       numa, cases.c_str());
	return 0;
}
