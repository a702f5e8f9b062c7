/*
 * tensor_lists_prog: the tensor-list kernel of apex's fused optimizers, as
 * DeepSpeed and other training libraries copy it, written here from its
 * documented layout: multi_tensor_apply_kernel(chunk_size, noop_flag,
 * TensorListMetadata<n>, functor, scalar), each block taking the slot and
 * the chunk the structure names for it. run_both.sh runs it plainly and
 * under Ember; with --expect tensor-lists the real driver's description
 * of this kernel (its name, its arguments' sizes) must be one that
 * shim/signal/tensor_lists.c reads by its blocks.
 *
 * It scales 300 tensors of odd sizes (more than one launch's slots, and
 * tensors split across launches) by 2 and adds 1 in chunks of 32,768
 * elements, twice: y = 2x + 1 with the chunk's elements passed as apex and
 * Transformer Engine pass them (int64_t), then x = 2y + 1 with them passed
 * as DeepSpeed's copy does (int). It prints each list's checksum, checked
 * against the host.
 */
#include <cuda_runtime.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(call)                                                                                  \
	do {                                                                                      \
		cudaError_t err_ = (call);                                                        \
		if (err_ != cudaSuccess) {                                                        \
			fprintf(stderr, "tensor_lists_prog: %s:%d: %s failed: %s\n", __FILE__, __LINE__, \
				#call, cudaGetErrorName(err_));                                   \
			exit(1);                                                                  \
		}                                                                                 \
	} while (0)

/* slots per list by depth, and blocks per launch: a structure under the 4 KB argument limit */
constexpr int slots_by_depth[5] = { 110, 64, 48, 36, 30 };
constexpr int blocks_per_launch = 320;

template <int n> struct TensorListMetadata {
	void *addresses[n][slots_by_depth[n - 1]];
	int sizes[slots_by_depth[n - 1]];
	unsigned char block_to_tensor[blocks_per_launch];
	int block_to_chunk[blocks_per_launch];
	int start_tensor_this_launch;
};

struct ScaleAddFunctor {
	__device__ void operator()(long long chunk_size, volatile int *noop, TensorListMetadata<2> &tl, float scale)
	{
		if (*noop) /* a flag the libraries' functors check first */
			return;
		int slot = tl.block_to_tensor[blockIdx.x], chunk = tl.block_to_chunk[blockIdx.x];
		const uint32_t *from_list = static_cast<const uint32_t *>(tl.addresses[0][slot]);
		uint32_t *to_list = static_cast<uint32_t *>(tl.addresses[1][slot]);
		long long from = chunk * chunk_size, to = from + chunk_size;
		if (to > tl.sizes[slot])
			to = tl.sizes[slot];
		for (long long i = from + threadIdx.x; i < to; i += blockDim.x)
			to_list[i] = static_cast<uint32_t>(scale) * from_list[i] + 1;
	}
};

/* apex's and Transformer Engine's kernel, and DeepSpeed's, whose chunk is an int */
template <typename T, typename U, typename... Args>
__global__ void multi_tensor_apply_kernel(long long chunk_size, volatile int *noop, T tl, U callable, Args... args)
{
	callable(chunk_size, noop, tl, args...);
}

template <typename T, typename U, typename... Args>
__global__ void multi_tensor_apply_kernel(int chunk_size, volatile int *noop, T tl, U callable, Args... args)
{
	callable(chunk_size, noop, tl, args...);
}

constexpr int depth = 2, slots = slots_by_depth[depth - 1];

/*
 * to[t] = 2 from[t] + 1 for every tensor t, filling the structure as apex
 * does: slots until they or the blocks run out, a tensor's chunks carried
 * over to the next launch in slot 0. Returns the launches made.
 */
template <typename Chunk>
static int scale_add(const std::vector<uint32_t *> &from, const std::vector<uint32_t *> &to,
		     const std::vector<int> &size, Chunk chunk, int *noop)
{
	TensorListMetadata<depth> tl = {};
	int tensors = static_cast<int>(from.size()), loaded = 0, blocks = 0, launches = 0;
	for (int t = 0; t < tensors; t++) {
		tl.addresses[0][loaded] = from[t];
		tl.addresses[1][loaded] = to[t];
		tl.sizes[loaded] = size[t];
		loaded++;
		int chunks = static_cast<int>((size[t] + chunk - 1) / chunk);
		for (int c = 0; c < chunks; c++) {
			tl.block_to_tensor[blocks] = static_cast<unsigned char>(loaded - 1);
			tl.block_to_chunk[blocks] = c;
			blocks++;
			bool last_chunk = c == chunks - 1;
			bool full = blocks == blocks_per_launch || (loaded == slots && last_chunk);
			if (!full && !(t == tensors - 1 && last_chunk))
				continue;
			multi_tensor_apply_kernel<<<blocks, 256>>>(chunk, noop, tl, ScaleAddFunctor(), 2.0f);
			CK(cudaGetLastError());
			launches++;
			blocks = 0;
			if (last_chunk) {
				loaded = 0;
			} else { /* the tensor goes on in the next launch, in slot 0 */
				tl.addresses[0][0] = tl.addresses[0][loaded - 1];
				tl.addresses[1][0] = tl.addresses[1][loaded - 1];
				tl.sizes[0] = tl.sizes[loaded - 1];
				loaded = 1;
			}
		}
	}
	return launches;
}

static uint64_t checksum(const std::vector<uint32_t *> &list, const std::vector<int> &size)
{
	uint64_t sum = 0;
	for (size_t t = 0; t < list.size(); t++) {
		std::vector<uint32_t> host(size[t]);
		CK(cudaMemcpy(host.data(), list[t], size[t] * sizeof(uint32_t), cudaMemcpyDeviceToHost));
		for (uint32_t v : host)
			sum += v;
	}
	return sum;
}

int main()
{
	constexpr int tensors = 300;
	std::vector<uint32_t *> x(tensors), y(tensors);
	std::vector<int> size(tensors);
	uint64_t want_y = 0, want_x = 0;
	for (int t = 0; t < tensors; t++) {
		size[t] = 1000 + t * 1331; /* up to about 400,000 elements: 13 chunks */
		std::vector<uint32_t> host(size[t]);
		for (int i = 0; i < size[t]; i++) {
			host[i] = static_cast<uint32_t>(t * 2654435761u + i * 40503u);
			uint32_t once = 2u * host[i] + 1u;
			want_y += once;
			want_x += 2u * once + 1u;
		}
		CK(cudaMalloc(&x[t], size[t] * sizeof(uint32_t)));
		CK(cudaMalloc(&y[t], size[t] * sizeof(uint32_t)));
		CK(cudaMemcpy(x[t], host.data(), size[t] * sizeof(uint32_t), cudaMemcpyHostToDevice));
	}
	int *noop;
	CK(cudaMalloc(&noop, sizeof *noop));
	CK(cudaMemset(noop, 0, sizeof *noop));

	int launches = scale_add(x, y, size, static_cast<long long>(32768), noop);
	CK(cudaDeviceSynchronize());
	uint64_t got_y = checksum(y, size);
	launches += scale_add(y, x, size, 32768, noop);
	CK(cudaDeviceSynchronize());
	uint64_t got_x = checksum(x, size);

	for (int t = 0; t < tensors; t++) {
		CK(cudaFree(x[t]));
		CK(cudaFree(y[t]));
	}
	CK(cudaFree(noop));
	printf("launches: %d\n", launches);
	printf("y = 2x + 1 (int64_t chunk): %016" PRIx64 "%s\n", got_y, got_y == want_y ? "" : " MISMATCH");
	printf("x = 2y + 1 (int chunk): %016" PRIx64 "%s\n", got_x, got_x == want_x ? "" : " MISMATCH");
	if (got_x != want_x || got_y != want_y)
		return 1;
	printf("tensor_lists_prog: OK\n");
	return 0;
}
